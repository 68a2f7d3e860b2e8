package card

import (
	"io/fs"
	"regexp"
	"strings"

	"github.com/cyan-agent/cyan/persona"
)

// The headings of the character's sections in an imported persona.md. An
// export finds the card's fields under them.
const (
	headSystem      = "# Instructions"
	headDescription = "# ${agent_name}"
	headPersonality = "# ${agent_name}'s personality"
	headScenario    = "# Scenario"
	headPostHistory = "# Final instructions"
)

// headExamples introduces the reference, made of the card's mes_example,
// in place of the built-in persona's few-shot section (fewShot).
const (
	headExamples  = "# Example conversations"
	examplesIntro = "The persona reference section right after this prompt holds example conversations (each opens with <START>). They show how ${agent_name} talks: follow their voice and manners. They did not happen in this conversation: don't repeat them or take their events as memories."
	fewShot       = "# Few-shot"
)

// characterHeads lists them in the order they are written.
var characterHeads = []string{headSystem, headDescription, headPersonality, headScenario}

// guard is put before a line of card text that reads like one of the
// headings, so that an export does not take it for one. It renders as
// nothing.
const guard = "${nothing = }"

var (
	charMacro     = regexp.MustCompile(`(?i)\{\{char\}\}|<bot>|<char>`)
	userMacro     = regexp.MustCompile(`(?i)\{\{user\}\}|<user>`)
	originalMacro = regexp.MustCompile(`(?i)\{\{original\}\}`)
	fileLoadRE    = regexp.MustCompile(`\$\{\s*file_load\(\s*['"]?([^)'"]+?)['"]?\s*\)\s*\}`)
)

// toTemplate turns card text into persona template text: line ends are
// "\n", a literal "${" is escaped, {{char}} becomes ${agent_name} and {{user}} ${user}.
func toTemplate(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n") // as persona.md is read
	s = strings.ReplaceAll(s, "${", `\${`)
	s = charMacro.ReplaceAllLiteralString(s, "${agent_name}")
	return userMacro.ReplaceAllLiteralString(s, "${user}")
}

// guarded guards the lines of template text that read like a heading.
func guarded(s string, heads map[string]bool) string {
	if !strings.Contains(s, "# ") {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if heads[strings.TrimRight(l, " \t\r")] {
			lines[i] = guard + l
		}
	}
	return strings.Join(lines, "\n")
}

// section is a "# heading" of a template and the text under it.
type section struct {
	head, text string
}

// splitSections cuts a template body at the lines that are headings
// (isHead), returning the text before the first and the sections.
func splitSections(body string, isHead func(string) bool) (pre string, secs []section) {
	lines := strings.SplitAfter(body, "\n")
	var cur *section
	var b strings.Builder
	flush := func() {
		if cur == nil {
			pre = b.String()
		} else {
			cur.text = b.String()
			secs = append(secs, *cur)
		}
		b.Reset()
	}
	for _, l := range lines {
		if h := strings.TrimRight(l, " \t\r\n"); isHead(h) {
			flush()
			cur = &section{head: h}
			continue
		}
		b.WriteString(l)
	}
	flush()
	return pre, secs
}

// platform is what an imported persona takes from the built-in one: the
// built-in's sections but its self-definition (split around where that
// stood: today only its few-shot section, which a card's examples
// replace), the files they load, and its variables. The chat notation,
// tool rules and system information are not among them: cyan renders
// those around every persona (package persona's platform part).
type platform struct {
	before, after []section
	files         map[string][]byte
	vars          map[string]any
	heads         []string
}

// selfDefinition is the built-in persona's own section, which a card's
// character replaces.
const selfDefinition = "# Self-Definition"

func builtinPlatform() (*platform, error) {
	fsys := persona.DefaultFS()
	raw, err := fs.ReadFile(fsys, persona.FileName)
	if err != nil {
		return nil, err
	}
	def, err := persona.Default()
	if err != nil {
		return nil, err
	}
	_, body := splitFrontMatter(string(raw))
	_, secs := splitSections(body, func(l string) bool { return strings.HasPrefix(l, "# ") })
	p := &platform{files: map[string][]byte{}, vars: map[string]any{}}
	seen := false
	for _, s := range secs {
		if s.head == selfDefinition {
			seen = true
			continue
		}
		p.heads = append(p.heads, s.head)
		for _, m := range fileLoadRE.FindAllStringSubmatch(s.text, -1) {
			if data, err := fs.ReadFile(fsys, m[1]); err == nil {
				p.files[m[1]] = data
			}
		}
		if seen {
			p.after = append(p.after, s)
		} else {
			p.before = append(p.before, s)
		}
	}
	for k, v := range def.Vars {
		if k != "agent_name" && k != "user" {
			p.vars[k] = v
		}
	}
	return p, nil
}

// splitFrontMatter cuts persona.md into its front-matter and its body.
func splitFrontMatter(src string) (front, body string) {
	src = strings.TrimPrefix(strings.ReplaceAll(src, "\r\n", "\n"), "\ufeff")
	lines := strings.SplitAfter(src, "\n")
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != "---" {
		return "", src
	}
	for i := 1; i < len(lines); i++ {
		if strings.TrimRight(lines[i], " \t\n") == "---" {
			return strings.Join(lines[1:i], ""), strings.Join(lines[i+1:], "")
		}
	}
	return "", src
}

// knownHeads are the headings an export splits an imported persona.md at.
func (p *platform) knownHeads() map[string]bool {
	m := map[string]bool{headPostHistory: true, selfDefinition: true, headExamples: true}
	for _, h := range characterHeads {
		m[h] = true
	}
	for _, h := range p.heads {
		m[h] = true
	}
	return m
}
