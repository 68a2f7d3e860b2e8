package tools

import (
	"errors"
	"strings"
)

// MaxCommand bounds a terminal command's length.
const MaxCommand = 16 << 10

// SplitCommand splits a shell command into the simple commands it runs, so
// that each can be held to the rules: at ";", "&&", "||", "|", "&", line
// breaks, "(" ")" subshells and "{ }" groups outside quotes; and the
// commands inside "$( )", "<( )", ">( )" and backquotes — also inside
// double quotes, where the shell runs them too — are added as parts of
// their own (the outer command keeps its text). Unbalanced quotes or
// parentheses are an error: such a command is not run.
func SplitCommand(cmd string) ([]string, error) {
	if len(cmd) > MaxCommand {
		return nil, errors.New("the command is too long")
	}
	parts, err := splitDepth(cmd, 0)
	if err != nil {
		return nil, err
	}
	return parts, nil
}

const maxNesting = 16

func splitDepth(s string, depth int) ([]string, error) {
	if depth > maxNesting {
		return nil, errors.New("command substitutions are nested too deeply")
	}
	var (
		parts []string
		inner []string
		cur   strings.Builder
	)
	flush := func() {
		t := strings.TrimSpace(cur.String())
		for t == "{" || t == "}" || strings.HasPrefix(t, "{ ") || strings.HasSuffix(t, " }") {
			t = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(t, "{"), "}"), "}"))
		}
		if t != "" {
			parts = append(parts, t)
		}
		cur.Reset()
	}
	sub := func(i int) (int, error) { // s[i] is "(" after "$", "<" or ">"
		end, err := matchParen(s, i)
		if err != nil {
			return 0, err
		}
		ps, err := splitDepth(s[i+1:end], depth+1)
		if err != nil {
			return 0, err
		}
		inner = append(inner, ps...)
		cur.WriteString(s[i : end+1])
		return end + 1, nil
	}
	tick := func(i int) (int, error) { // s[i] is "`"
		end := strings.IndexByte(s[i+1:], '`')
		if end < 0 {
			return 0, errors.New("unbalanced backquote")
		}
		end += i + 1
		ps, err := splitDepth(s[i+1:end], depth+1)
		if err != nil {
			return 0, err
		}
		inner = append(inner, ps...)
		cur.WriteString(s[i : end+1])
		return end + 1, nil
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			cur.WriteString(s[i : i+2])
			i += 2
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, errors.New("unbalanced single quote")
			}
			cur.WriteString(s[i : i+end+2])
			i += end + 2
		case c == '"':
			cur.WriteByte(c)
			i++
			closed := false
			for i < len(s) && !closed {
				switch {
				case s[i] == '\\' && i+1 < len(s):
					cur.WriteString(s[i : i+2])
					i += 2
				case s[i] == '"':
					cur.WriteByte('"')
					i++
					closed = true
				case s[i] == '$' && i+1 < len(s) && s[i+1] == '(':
					cur.WriteByte('$')
					n, err := sub(i + 1)
					if err != nil {
						return nil, err
					}
					i = n
				case s[i] == '`':
					n, err := tick(i)
					if err != nil {
						return nil, err
					}
					i = n
				default:
					cur.WriteByte(s[i])
					i++
				}
			}
			if !closed {
				return nil, errors.New("unbalanced double quote")
			}
		case (c == '$' || c == '<' || c == '>') && i+1 < len(s) && s[i+1] == '(':
			cur.WriteByte(c)
			n, err := sub(i + 1)
			if err != nil {
				return nil, err
			}
			i = n
		case c == '`':
			n, err := tick(i)
			if err != nil {
				return nil, err
			}
			i = n
		case c == ';' || c == '&' || c == '|' || c == '\n' || c == '\r' || c == '(' || c == ')':
			if c == ')' {
				return nil, errors.New("unbalanced parenthesis")
			}
			if c == '(' {
				end, err := matchParen(s, i)
				if err != nil {
					return nil, err
				}
				flush()
				ps, err := splitDepth(s[i+1:end], depth+1)
				if err != nil {
					return nil, err
				}
				parts = append(parts, ps...)
				i = end + 1
				continue
			}
			if c == '&' && cur.Len() > 0 && (strings.HasSuffix(cur.String(), ">") || strings.HasSuffix(cur.String(), "<")) {
				cur.WriteByte(c) // a redirection such as 2>&1
				i++
				continue
			}
			flush()
			i++
		default:
			cur.WriteByte(c)
			i++
		}
	}
	flush()
	return append(parts, inner...), nil
}

// matchParen returns the index of the ")" closing the "(" at s[i],
// skipping quoted text and nested parentheses.
func matchParen(s string, i int) (int, error) {
	depth := 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '\'':
			end := strings.IndexByte(s[j+1:], '\'')
			if end < 0 {
				return 0, errors.New("unbalanced single quote")
			}
			j += end + 1
		case '"':
			k := j + 1
			for k < len(s) && s[k] != '"' {
				if s[k] == '\\' {
					k++
				}
				k++
			}
			if k >= len(s) {
				return 0, errors.New("unbalanced double quote")
			}
			j = k
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return j, nil
			}
		}
	}
	return 0, errors.New("unbalanced parenthesis")
}
