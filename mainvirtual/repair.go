package mainvirtual

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/cyan-agent/cyan/llm"
)

// Small models get tool calls wrong in a few ways whose intent is still
// plain: a known other name for a tool, arguments cut off before their
// closing braces, a list of one string or a number where the schema wants
// a string, or the whole call written as text — in a ```json fence, or a
// <tool_call> tag the server's parser did not take (llama.cpp passes such
// text on as content). repairCalls fixes those and says what it fixed;
// anything less plain is left for the tool to refuse.

// toolAliases are other names models use for cyan's tools.
var toolAliases = map[string]string{
	"save_memory": "remember", "add_memory": "remember", "store_memory": "remember", "memory_save": "remember",
	"memorize": "remember", "memorise": "remember", "remember_fact": "remember", "save_fact": "remember",
	"search_memory": "recall", "memory_search": "recall", "search": "recall",
	"read": "open", "open_ref": "open",
}

// textCall is a tool call written as text: a fenced JSON block or a
// <tool_call> tag holding {"name": …, "arguments": {…}}.
var textCall = regexp.MustCompile("(?s)```(?:json|tool_call)?\\s*(\\{.*?\\})\\s*```|<tool_call>\\s*(\\{.*?\\})\\s*</tool_call>")

// repairCalls returns resp's calls repaired against the offered tools,
// the content without any call taken out of it, and a note per repair.
func repairCalls(resp *llm.Response, tools []llm.Tool) (calls []llm.ToolCall, content string, notes []string) {
	content = resp.Content
	calls = append(calls, resp.ToolCalls...)
	if len(tools) == 0 {
		return calls, content, nil
	}
	offered := map[string]llm.Tool{}
	for _, t := range tools {
		offered[t.Name] = t
	}
	if len(calls) == 0 {
		calls, content, notes = callsInText(content, offered)
	}
	for i := range calls {
		c := &calls[i]
		if name, ok := resolveName(c.Name, offered); ok && name != c.Name {
			notes = append(notes, fmt.Sprintf("tool %q was called as %q", name, c.Name))
			c.Name = name
		}
		args, fixes := repairArgs(c.Arguments, offered[c.Name].Parameters)
		if len(fixes) > 0 {
			c.Arguments = args
			for _, f := range fixes {
				notes = append(notes, c.Name+": "+f)
			}
		}
	}
	return calls, content, notes
}

// callsInText takes tool calls written as text out of content.
func callsInText(content string, offered map[string]llm.Tool) ([]llm.ToolCall, string, []string) {
	var calls []llm.ToolCall
	var notes []string
	out := textCall.ReplaceAllStringFunc(content, func(block string) string {
		m := textCall.FindStringSubmatch(block)
		raw := m[1] + m[2]
		var c struct {
			Name       string          `json:"name"`
			Arguments  json.RawMessage `json:"arguments"`
			Parameters json.RawMessage `json:"parameters"`
		}
		if json.Unmarshal([]byte(raw), &c) != nil || c.Name == "" {
			return block
		}
		name, ok := resolveName(c.Name, offered)
		if !ok {
			return block
		}
		args := c.Arguments
		if len(args) == 0 {
			args = c.Parameters
		}
		if len(args) > 0 && args[0] == '"' { // arguments as a JSON string
			var s string
			if json.Unmarshal(args, &s) == nil {
				args = json.RawMessage(s)
			}
		}
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		where := "a ```json fence"
		if m[2] != "" {
			where = "a <tool_call> tag"
		}
		notes = append(notes, fmt.Sprintf("a call of %s written as text in %s was taken as a tool call", name, where))
		calls = append(calls, llm.ToolCall{ID: fmt.Sprintf("text_call_%d", len(calls)), Name: name, Arguments: string(args)})
		return ""
	})
	if len(calls) == 0 {
		return nil, content, nil
	}
	return calls, strings.TrimSpace(out), notes
}

// resolveName finds the offered tool a name means: itself, a known alias,
// or the same name in another case or with dashes or a "functions."
// prefix.
func resolveName(name string, offered map[string]llm.Tool) (string, bool) {
	if _, ok := offered[name]; ok {
		return name, true
	}
	n := strings.ToLower(strings.TrimSpace(name))
	n = strings.TrimPrefix(n, "functions.")
	n = strings.NewReplacer("-", "_", " ", "_").Replace(n)
	if _, ok := offered[n]; ok {
		return n, true
	}
	if a, ok := toolAliases[n]; ok {
		if _, ok := offered[a]; ok {
			return a, true
		}
	}
	return name, false
}

// repairArgs fixes arguments: closes JSON cut off before its end, and
// gives string parameters a string where the model sent a list of one or
// a number. It returns the arguments and what it fixed (none: unchanged).
func repairArgs(args string, schema json.RawMessage) (string, []string) {
	var fixes []string
	t := strings.TrimSpace(args)
	if t == "" {
		return args, nil
	}
	var obj map[string]any
	if json.Unmarshal([]byte(t), &obj) != nil {
		closed, ok := closeJSON(t)
		if !ok || json.Unmarshal([]byte(closed), &obj) != nil || obj == nil {
			return args, nil
		}
		fixes = append(fixes, "closed the unclosed JSON of its arguments")
	}
	if obj == nil {
		return args, nil
	}
	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(schema, &s)
	for k, p := range s.Properties {
		if p.Type != "string" {
			continue
		}
		switch v := obj[k].(type) {
		case []any:
			if len(v) == 1 {
				if str, ok := scalarString(v[0]); ok {
					obj[k] = str
					fixes = append(fixes, fmt.Sprintf("%s was a list of one; its element was taken", k))
				}
			}
		case float64, bool:
			str, _ := scalarString(v)
			obj[k] = str
			fixes = append(fixes, fmt.Sprintf("%s was a %T; it was taken as the string %q", k, v, str))
		}
	}
	if len(fixes) == 0 {
		return args, nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(obj); err != nil {
		return args, nil
	}
	return strings.TrimSpace(b.String()), fixes
}

func scalarString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case bool:
		return strconv.FormatBool(x), true
	}
	return "", false
}

// closeJSON closes what s leaves open: a string, then the arrays and
// objects, innermost first. ok is false when s does not read as the
// beginning of a JSON object (a closing bracket that does not match).
func closeJSON(s string) (string, bool) {
	if !strings.HasPrefix(s, "{") {
		return "", false
	}
	var stack []byte
	inString, escaped := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString && c == '"':
			inString = false
		case inString:
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			stack = append(stack, c)
		case c == '}' || c == ']':
			if len(stack) == 0 {
				return "", false
			}
			open := stack[len(stack)-1]
			if open == '{' && c != '}' || open == '[' && c != ']' {
				return "", false
			}
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) == 0 && !inString {
		return "", false // complete already: not a cut-off object
	}
	if !inString {
		s = strings.TrimRight(strings.TrimRight(s, " \t\r\n"), ",")
	}
	var b strings.Builder
	b.WriteString(s)
	if escaped {
		b.WriteByte('\\')
	}
	if inString {
		b.WriteByte('"')
	}
	for i := len(stack) - 1; i >= 0; i-- {
		if stack[i] == '{' {
			b.WriteByte('}')
		} else {
			b.WriteByte(']')
		}
	}
	return b.String(), true
}

// badArgsResult is the one instruction a model gets for arguments that
// could not be read or repaired: the call did not run; one more try with
// a JSON object, or an answer without it.
func badArgsResult(c llm.ToolCall) string {
	return fmt.Sprintf("error: the arguments of %s are not a JSON object, so it did not run. Call %s once more with a JSON object of its parameters, or answer without it.", c.Name, c.Name)
}

// argsReadable reports whether a call's arguments are a JSON object (or
// empty).
func argsReadable(args string) bool {
	t := strings.TrimSpace(args)
	if t == "" || t == "null" {
		return true
	}
	var obj map[string]any
	return json.Unmarshal([]byte(t), &obj) == nil && obj != nil
}
