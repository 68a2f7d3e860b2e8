package script

import (
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// body reads the messages: "role: text" lines (a mapping whose keys may
// repeat) or a YAML list of them.
func (d *decl) body(text string, line0 int) []error {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	n, err := parseYAML(d.file, text, line0)
	if err != nil {
		return []error{err}
	}
	if n == nil {
		return nil
	}
	errs := d.unsupportedTags(n, line0)
	if err := d.lostAfterBlock(n, text, line0); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return errs
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			errs = append(errs, d.message(n.Content[i], n.Content[i+1], line0)...)
		}
	case yaml.SequenceNode:
		for _, item := range n.Content {
			errs = append(errs, d.listItem(item, line0)...)
		}
	case yaml.ScalarNode:
		// A lone text is the user speaking.
		errs = append(errs, d.message(&yaml.Node{Kind: yaml.ScalarNode, Value: "user", Line: n.Line, Column: n.Column}, n, line0)...)
	default:
		errs = append(errs, d.at(n, line0).errorf("the messages are lines of \"role: text\" (system:, user:, assistant:) or a list of them"))
	}
	return errs
}

// listItem reads one item of a message list: {role: text}, {role: r,
// content: text} or a plain text (the user).
func (d *decl) listItem(item *yaml.Node, line0 int) []error {
	switch {
	case item.Kind == yaml.ScalarNode:
		return d.message(&yaml.Node{Kind: yaml.ScalarNode, Value: "user", Line: item.Line, Column: item.Column}, item, line0)
	case item.Kind == yaml.MappingNode && len(item.Content) == 2:
		return d.message(item.Content[0], item.Content[1], line0)
	case item.Kind == yaml.MappingNode && len(item.Content) == 4:
		var role, content *yaml.Node
		for i := 0; i < 4; i += 2 {
			switch item.Content[i].Value {
			case "role":
				role = item.Content[i+1]
			case "content":
				content = item.Content[i+1]
			}
		}
		if role != nil && content != nil {
			return d.message(role, content, line0)
		}
	}
	return []error{d.at(item, line0).errorf("a message is one \"role: text\" pair (or {role: …, content: …})")}
}

var roles = []string{"system", "user", "assistant"}

func (d *decl) message(k, v *yaml.Node, line0 int) []error {
	at := d.at(k, line0)
	role := strings.TrimSpace(k.Value)
	if i := strings.IndexByte(role, '['); i > 0 && strings.HasSuffix(role, "]") {
		return []error{at.errorf("group-chat roles (%s) are not supported; use system:, user: or assistant:", role)}
	}
	switch {
	case strings.HasPrefix(role, "$") || strings.HasPrefix(role, "->"):
		return []error{at.errorf("script directives (%s) are not supported: a script is role messages only", role)}
	case !slices.Contains(roles, role):
		return []error{at.errorf("unknown role %q: a message is system:, user: or assistant:", role)}
	}
	if role == "system" {
		if len(d.messages) > 0 {
			return []error{at.errorf("system messages come first, before any user or assistant message")}
		}
		return d.systemMessage(v, line0)
	}
	text, ok := scalarString(v)
	if !ok {
		if v.Kind == yaml.ScalarNode { // null: an empty message
			text = ""
		} else {
			return []error{d.at(v, line0).errorf("a %s message is text", role)}
		}
	}
	if msg := unsupportedText(text); msg != "" {
		return []error{d.at(v, line0).errorf("%s", msg)}
	}
	m := message{at: at, role: role}
	pos := positionOf(v, d.lines, line0)
	if role == "assistant" {
		s, before, after, err := findSite(text)
		if err != nil {
			return []error{d.at(v, line0).errorf("%v", err)}
		}
		if s != nil {
			s.at = d.at(v, line0)
			m.site = s
			t, err := parseTemplate(d.file, pos, before)
			if err != nil {
				return []error{err}
			}
			m.text = t
			if m.after, err = parseTemplate(d.file, pos, after); err != nil {
				return []error{err}
			}
			d.messages = append(d.messages, m)
			return nil
		}
	}
	t, err := parseTemplate(d.file, pos, text)
	if err != nil {
		return []error{err}
	}
	m.text = t
	d.messages = append(d.messages, m)
	return nil
}

// systemMessage reads plain text (its content) or {background, content,
// notes}.
func (d *decl) systemMessage(v *yaml.Node, line0 int) []error {
	sp := systemPart{at: d.at(v, line0)}
	parse := func(n *yaml.Node) (*template, error) {
		s, ok := scalarString(n)
		if !ok {
			return nil, d.at(n, line0).errorf("expected text")
		}
		if msg := unsupportedText(s); msg != "" {
			return nil, d.at(n, line0).errorf("%s", msg)
		}
		return parseTemplate(d.file, positionOf(n, d.lines, line0), s)
	}
	var errs []error
	switch v.Kind {
	case yaml.ScalarNode:
		t, err := parse(v)
		if err != nil {
			return []error{err}
		}
		sp.content = t
	case yaml.MappingNode:
		for i := 0; i+1 < len(v.Content); i += 2 {
			k, val := v.Content[i], v.Content[i+1]
			var err error
			switch k.Value {
			case "background":
				sp.background, err = parse(val)
			case "content":
				sp.content, err = parse(val)
			case "notes":
				items := []*yaml.Node{val}
				if val.Kind == yaml.SequenceNode {
					items = val.Content
				}
				for _, it := range items {
					t, e := parse(it)
					if e != nil {
						err = errors.Join(err, e)
						continue
					}
					sp.notes = append(sp.notes, t)
				}
			default:
				err = d.at(k, line0).errorf("unknown system field %q; a structured system message has background, content and notes", k.Value)
			}
			if err != nil {
				errs = append(errs, err)
			}
		}
	default:
		errs = append(errs, d.at(v, line0).errorf("a system message is text or {background, content, notes}"))
	}
	d.system = append(d.system, sp)
	return errs
}

// siteRef matches anything in double square brackets.
var siteRef = regexp.MustCompile(`\[\[([^\[\]]*)\]\]`)

// siteName matches a generation site's name and optional choices.
var siteName = regexp.MustCompile(`^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?::\s*(\|.*))?$`)

// findSite finds the generation site of an assistant message: [[NAME]] or
// [[NAME:|a|b|c]]. Other [[…]] forms of ISDK (script calls, regular
// expressions, model parameters, local random choice) are refused.
func findSite(text string) (s *site, before, after string, err error) {
	locs := siteRef.FindAllStringSubmatchIndex(text, -1)
	if len(locs) == 0 {
		return nil, text, "", nil
	}
	if len(locs) > 1 {
		return nil, "", "", errors.New("an assistant message holds one generation site ([[NAME]]); split it into several messages")
	}
	inner := text[locs[0][2]:locs[0][3]]
	m := siteName.FindStringSubmatch(inner)
	if m == nil {
		return nil, "", "", errors.New("[[" + inner + "]] is not a generation site: write [[NAME]], or [[NAME:|a|b|c]] to force one of the options (script calls, regular expressions and parameters in [[…]] are not supported)")
	}
	s = &site{name: m[1]}
	if m[2] != "" {
		seen := map[string]bool{}
		for _, o := range strings.Split(m[2], "|") {
			o = strings.TrimSpace(o)
			if o == "" || seen[o] {
				continue
			}
			if strings.Contains(o, ":") && (strings.Contains(o, "random") || strings.Contains(o, "=")) {
				return nil, "", "", errors.New("[[" + inner + "]]: options take no parameters (local random choice is not supported)")
			}
			seen[o] = true
			s.choices = append(s.choices, o)
		}
		if len(s.choices) < 2 {
			return nil, "", "", errors.New("[[" + inner + "]]: a choice lists at least two options: [[NAME:|a|b]]")
		}
	}
	return s, text[:locs[0][0]], text[locs[0][1]:], nil
}

// mustJSON encodes a value built from YAML; a value JSON cannot hold (a
// NaN) gives nil, which no JSON reader accepts.
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}
