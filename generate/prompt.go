package generate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/cyan-agent/cyan/llm"
)

// Layer headers of the user message.
const (
	headInstruction = "Instruction:"
	headContext     = "Context:"
	headShape       = "Required output shape (JSON Schema):"
	headChoice      = "Required output: exactly one of these options, and nothing else:"
	askJSON         = "Answer with one JSON value that matches it, and nothing else."
	clipMark        = "[…clipped]"
)

// reservedLabels are provider roles; a context label may not be one.
var reservedLabels = []string{"system", "assistant", "tool", "developer"}

// CheckLabel refuses a context label that names a provider role.
func CheckLabel(label string) error {
	l := strings.ToLower(strings.TrimSpace(label))
	for _, r := range reservedLabels {
		if l == r {
			return fmt.Errorf("the context label %q is reserved (a provider role); name what the context is, e.g. \"notes\" or \"user question\"", label)
		}
	}
	if strings.ContainsAny(label, "[]\n") {
		return fmt.Errorf("the context label %q may not hold '[', ']' or a line break", label)
	}
	return nil
}

// systemText renders the identity layer and the further system text.
func systemText(id Identity, extra string) string {
	var parts []string
	if r := strings.TrimSpace(id.Role); r != "" {
		if !strings.HasSuffix(r, ".") && !strings.HasSuffix(r, "。") {
			r += "."
		}
		line := "You are " + r
		if d := strings.TrimSpace(id.Description); d != "" {
			line += "\n" + d
		}
		parts = append(parts, line)
	} else if d := strings.TrimSpace(id.Description); d != "" {
		parts = append(parts, d)
	}
	if e := strings.TrimSpace(extra); e != "" {
		parts = append(parts, e)
	}
	return strings.Join(parts, "\n\n")
}

// contextText renders one item's value: text as it is, anything else as
// indented JSON.
func contextText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case fmt.Stringer:
		return x.String()
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSpace(buf.String())
}

// headerLike matches a line that reads like a layer header.
var headerLike = regexp.MustCompile(`^\s*(\[[^\]\n]*\]|Instruction:|Context:|Required output[^\n]*:|source:.*)\s*$`)

// escapeContext keeps context text from forging layer headers.
func escapeContext(s string) string {
	if !strings.ContainsAny(s, "[:") {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if headerLike.MatchString(l) {
			lines[i] = `\` + l
		}
	}
	return strings.Join(lines, "\n")
}

// clip cuts s to budget tokens, dropping whole lines from the end, then
// runes, and marks the cut.
func clip(s string, budget int, count func(string) int) (string, bool) {
	if budget <= 0 || count(s) <= budget {
		return s, false
	}
	lines := strings.Split(s, "\n")
	for len(lines) > 1 {
		lines = lines[:len(lines)-1]
		if c := strings.Join(lines, "\n") + "\n" + clipMark; count(c) <= budget {
			return c, true
		}
	}
	t := lines[0]
	for len(t) > 0 {
		cut := len(t) * 3 / 4
		for cut > 0 && !utf8.RuneStart(t[cut]) {
			cut--
		}
		t = t[:cut]
		if c := t + " " + clipMark; count(c) <= budget {
			return c, true
		}
	}
	return clipMark, true
}

// roughCount estimates tokens without a tokenizer: a token per 3 bytes,
// which errs on the high side for English and is close for CJK text.
func roughCount(s string) int { return (len(s) + 2) / 3 }

// renderContext renders the items in order, clipped to their budgets.
func renderContext(items []ContextItem, count func(string) int) []ContextTrace {
	out := make([]ContextTrace, 0, len(items))
	for i, it := range items {
		label := strings.TrimSpace(it.Label)
		if label == "" {
			label = it.Source
		}
		text, clipped := clip(escapeContext(contextText(it.Value)), it.Budget, count)
		ct := ContextTrace{Index: i, Source: it.Source, Label: label, Text: text,
			Budget: it.Budget, Tokens: count(text), Clipped: clipped}
		if _, isText := it.Value.(string); !isText {
			ct.Value = it.Value
		}
		out = append(out, ct)
	}
	return out
}

// userText renders the user layer: the instruction, the labelled context
// and the required output shape. With neither context nor shape it is the
// instruction alone.
func userText(input string, items []ContextTrace, shape *Shape) string {
	input = strings.TrimSpace(input)
	if len(items) == 0 && shape == nil {
		return input
	}
	var b strings.Builder
	b.WriteString(headInstruction + "\n" + input)
	if len(items) > 0 {
		b.WriteString("\n\n" + headContext)
		for i, it := range items {
			if i > 0 {
				b.WriteByte('\n')
			}
			fmt.Fprintf(&b, "\n[%s]", it.Label)
			if it.Source != "" && it.Source != it.Label {
				b.WriteString("\nsource: " + it.Source)
			}
			if it.Text != "" {
				b.WriteString("\n" + it.Text)
			}
		}
	}
	if shape != nil {
		b.WriteString("\n\n" + shapeText(shape))
	}
	return b.String()
}

// shapeText is the output-shape layer: a list of options for a choice,
// else the schema.
func shapeText(s *Shape) string {
	if opts := s.choices(); len(opts) > 0 {
		return headChoice + "\n- " + strings.Join(opts, "\n- ")
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, s.raw, "", "  "); err != nil {
		buf.Reset()
		buf.Write(s.raw)
	}
	return headShape + "\n" + buf.String() + "\n" + askJSON
}

// render builds the provider messages of a request.
func render(req Request, items []ContextTrace, shape *Shape) []llm.Message {
	var msgs []llm.Message
	if sys := systemText(req.Identity, req.System); sys != "" {
		msgs = append(msgs, llm.Message{Role: llm.RoleSystem, Content: sys})
	}
	msgs = append(msgs, req.History...)
	return append(msgs, llm.Message{Role: llm.RoleUser, Content: userText(req.Input, items, shape)})
}

// maxEcho bounds how much of a failed answer is sent back on a retry.
const maxEcho = 4000

// feedback is what a retry tells the model about the failed answer.
func feedback(err error, finish string, shape *Shape) string {
	var b strings.Builder
	if finish == "length" {
		b.WriteString("Your answer was cut off at the output limit; answer more briefly. ")
	}
	b.WriteString("Your answer could not be used: " + err.Error() + ". ")
	switch {
	case shape == nil:
		b.WriteString("Answer the instruction.")
	case len(shape.choices()) > 0:
		b.WriteString("Answer again with exactly one of the options, and nothing else.")
	default:
		b.WriteString("Answer again with only a JSON value that matches the required output shape.")
	}
	return b.String()
}

// echo is a failed answer as sent back on a retry.
func echo(answer string) string {
	if len(answer) <= maxEcho {
		return answer
	}
	cut := maxEcho
	for cut > 0 && !utf8.RuneStart(answer[cut]) {
		cut--
	}
	return answer[:cut] + " " + clipMark
}
