package lorebook

import (
	"fmt"
	"strconv"
	"strings"
)

// decorate takes the V3 decorators ("@@name value" lines at the top of the
// content) out of e.Content and applies those cyan honours. A "@@@name"
// line is the fallback of the decorator above it: it applies only when that
// one was not honoured.
func (e *Entry) decorate(warn *[]string) {
	if !strings.HasPrefix(e.Content, "@@") {
		return
	}
	lines := strings.SplitAfter(e.Content, "\n")
	rest := len(lines)
	fallback := false // the last decorator was not honoured: a fallback may apply
	for i, line := range lines {
		l := strings.TrimRight(line, "\r\n")
		if !strings.HasPrefix(l, "@@") {
			rest = i
			break
		}
		if strings.HasPrefix(l, "@@@") {
			if !fallback {
				continue
			}
			l = l[1:]
		}
		fallback = !e.decorator(l[2:], warn)
	}
	e.Content = strings.TrimLeft(strings.Join(lines[rest:], ""), "\r\n")
}

// decorator applies one decorator (without its "@@") and reports whether
// it is honoured.
func (e *Entry) decorator(d string, warn *[]string) bool {
	name, value, _ := strings.Cut(d, " ")
	value = strings.TrimSpace(value)
	switch name {
	case "activate":
		e.activate = true
	case "dont_activate":
		e.dontActivate = true
	case "scan_depth":
		n, err := strconv.Atoi(value)
		if err != nil {
			*warn = append(*warn, fmt.Sprintf("%s: @@scan_depth %q is not a whole number; ignored", e.Label(), value))
			return false
		}
		e.ScanDepth = clampDepth(float64(n))
	case "position":
		switch value {
		case "before_desc":
			e.Position, e.PositionNote = Before, ""
		case "after_desc", "personality", "scenario":
			e.Position, e.PositionNote = After, ""
		default:
			return false
		}
	case "additional_keys":
		e.additional = append(e.additional, e.decoratorKeys(value, warn)...)
	case "exclude_keys":
		e.exclude = append(e.exclude, e.decoratorKeys(value, warn)...)
	default:
		return false
	}
	return true
}

func (e *Entry) decoratorKeys(value string, warn *[]string) []key {
	var out []key
	for _, t := range strings.Split(value, ",") {
		if t = strings.TrimSpace(t); t != "" && len(t) <= MaxKeyBytes {
			k, note := newKey(t, e.UseRegex, e.CaseSensitive)
			if note != "" {
				*warn = append(*warn, e.Label()+": "+note)
			}
			out = append(out, k)
		}
	}
	return out
}
