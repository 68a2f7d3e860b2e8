package persona

import (
	"embed"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// The platform part of the system prompt (SPEC §9): the notation the model
// reads and writes, the rules of tool calls and the system information
// are cyan's contract with the model, not a persona's choice. cyan renders
// them around the persona's own template, in the persona's language when
// it declares one (language: zh; English otherwise):
//
//	# Notation & Syntax   (platform)
//	<the persona's template>
//	# Tools               (platform)
//	# System Info         (platform)
//
// A persona adds to it and rewords it through declared slots, never
// removes it: in its front-matter,
//
//	platform:
//	  notation_intro: …   # replaces the notation's opening sentence
//	  notation_extra: …   # added after the notation rules
//	  tools_extra: …      # added after the tool rules
//	  system_intro: …     # replaces the system information's opening
//	  system_extra: …     # added at the end
//
// A persona folder written before this split is a copy of the old
// built-in, with its own sections headed "# Notation & Syntax", "# Tools"
// and "# System Info": when a persona's text has the first of them, those
// three sections are replaced by the platform's, so existing folders keep
// working without saying the rules twice. Any other persona's text is left
// exactly as written, headings included.

//go:embed platform/*.md
var platformFiles embed.FS

// Languages the platform part is written in.
var Languages = []string{"en", "zh"}

// Slots a persona may fill (front-matter platform:).
var Slots = []string{"notation_intro", "notation_extra", "tools_extra", "system_intro", "system_extra"}

var (
	platformOnce  sync.Once
	platformTmpls map[string]*Template
	platformErr   error
)

// platform returns the platform template of a language.
func platform(lang string) (*Template, error) {
	platformOnce.Do(func() {
		platformTmpls = map[string]*Template{}
		for _, l := range Languages {
			src, err := platformFiles.ReadFile("platform/" + l + ".md")
			if err != nil {
				platformErr = err
				return
			}
			t, err := Parse("platform/"+l+".md", string(src))
			if err != nil {
				platformErr = err
				return
			}
			platformTmpls[l] = t
		}
	})
	if platformErr != nil {
		return nil, fmt.Errorf("persona: the platform prompt: %w", platformErr)
	}
	t, ok := platformTmpls[lang]
	if !ok {
		t = platformTmpls["en"]
	}
	return t, nil
}

// platformHeads are the section headers the platform owns, in every
// language it is written in.
var platformHeads = []string{"# Notation & Syntax", "# Tools", "# System Info", "# 符号与语法", "# 工具", "# 系统信息"}

var heading = regexp.MustCompile(`(?m)^# \S.*$`)

// legacyHeads mark a persona copied from the built-in before the split.
var legacyHead = regexp.MustCompile(`(?m)^(# Notation & Syntax|# 符号与语法)\s*$`)

// withoutPlatformSections removes from a legacy persona's rendered template
// the sections the platform renders itself (see the package's platform
// note); other personas' text is returned as it is.
func withoutPlatformSections(body string) (string, []string) {
	if !legacyHead.MatchString(body) {
		return body, nil
	}
	locs := heading.FindAllStringIndex(body, -1)
	var b strings.Builder
	var dropped []string
	b.WriteString(body[:locs[0][0]])
	for i, loc := range locs {
		end := len(body)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		head := strings.TrimSpace(body[loc[0]:loc[1]])
		if slices.Contains(platformHeads, head) {
			dropped = append(dropped, head)
			continue
		}
		b.WriteString(body[loc[0]:end])
	}
	return b.String(), dropped
}

// renderWithPlatform renders the persona's template and wraps it in the
// platform part.
func (p *Persona) renderWithPlatform(vars map[string]any) (string, error) {
	own, err := p.tmpl.Render(vars)
	if err != nil {
		return "", err
	}
	own, _ = withoutPlatformSections(own)
	t, err := platform(p.Language)
	if err != nil {
		return "", err
	}
	pv := maps.Clone(vars)
	for _, s := range Slots {
		delete(pv, s) // only the front-matter's platform: slots fill them
		if strings.HasSuffix(s, "_extra") {
			pv[s] = "" // an intro left out keeps the platform's wording
		}
	}
	maps.Copy(pv, p.slots)
	pv["persona"] = strings.TrimSpace(own)
	out, err := t.Render(pv)
	if err != nil {
		return "", err
	}
	return collapseBlankLines(out), nil
}

var blankRun = regexp.MustCompile(`\n{3,}`)

// collapseBlankLines keeps at most one blank line between paragraphs (an
// empty slot leaves none behind).
func collapseBlankLines(s string) string {
	return strings.TrimSpace(blankRun.ReplaceAllString(s, "\n\n"))
}
