package mainvirtual

import (
	"regexp"
	"slices"
	"strings"

	"github.com/cyan-agent/cyan/turn"
)

// usageTrailer matches the trailing form; its attributes are read by
// usageAttr.
var (
	usageTrailer = regexp.MustCompile(`<workspace_usage\b([^<>]*)/?>(?:\s*</workspace_usage>)?`)
	usageAttr    = regexp.MustCompile(`\b(used|maybe)\s*=\s*"([^"]*)"`)
)

// cutUsage removes every usage trailer from text and returns what they
// reported (nil when there was none).
func cutUsage(text string) (string, *turn.Usage) {
	if !strings.Contains(text, "<workspace_usage") {
		return text, nil
	}
	var u *turn.Usage
	text = usageTrailer.ReplaceAllStringFunc(text, func(tag string) string {
		if u == nil {
			u = &turn.Usage{Path: turn.UsageTrailer}
		}
		for _, m := range usageAttr.FindAllStringSubmatch(tag, -1) {
			ids := strings.FieldsFunc(m[2], func(r rune) bool { return r == ',' || r == ' ' || r == '，' })
			if m[1] == "used" {
				u.Used = appendNew(u.Used, ids...)
			} else {
				u.Maybe = appendNew(u.Maybe, ids...)
			}
		}
		return ""
	})
	return text, u
}

// merge adds a step's report to the turn's.
func merge(u *turn.Usage, step *turn.Usage) {
	if step == nil {
		return
	}
	if u.Path == "" {
		u.Path = step.Path
	}
	u.Used = appendNew(u.Used, step.Used...)
	u.Maybe = appendNew(u.Maybe, step.Maybe...)
}

func appendNew(list []string, ids ...string) []string {
	for _, id := range ids {
		if id = strings.TrimSpace(id); id != "" && !slices.Contains(list, id) {
			list = append(list, id)
		}
	}
	return list
}
