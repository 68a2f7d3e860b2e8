package persona

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Render fills the template with vars. A variable that is missing and has no
// default is an *Error at its expression.
func (t *Template) Render(vars map[string]any) (string, error) {
	return t.render(t.nodes, vars)
}

func (t *Template) render(ns []node, vars map[string]any) (string, error) {
	var buf []byte
	dropLine := false // a standalone conditional rendered nothing: eat the rest of its line
	for i := range ns {
		n := &ns[i]
		eat := dropLine
		dropLine = false
		switch n.kind {
		case kindText:
			s := n.text
			if eat {
				s = restOfLine(s)
			}
			buf = append(buf, s...)
		case kindVar:
			v, ok := vars[n.name]
			var s string
			switch {
			case ok && v != nil:
				s = format(v)
			case n.hasDefault:
				s = n.text
			case !ok:
				return "", &Error{File: t.file, Line: n.line, Col: n.col,
					Msg: fmt.Sprintf("unknown variable %q: set it or give a default, ${%s = …}", n.name, n.name)}
			}
			buf = appendIndented(buf, s)
		case kindFile:
			s, ok := t.files[n.text]
			if !ok {
				return "", &Error{File: t.file, Line: n.line, Col: n.col,
					Msg: fmt.Sprintf("file_load(%s): the file was not read (ReadFiles comes before Render)", n.text)}
			}
			buf = appendIndented(buf, s)
		case kindCond:
			branch := n.b
			if truthy(vars[n.name]) != n.negate {
				branch = n.a
			}
			s, err := t.render(branch, vars)
			if err != nil {
				return "", err
			}
			if s == "" && n.standalone && lineBlank(buf) {
				buf = buf[:lineStart(buf)]
				dropLine = true
				continue
			}
			buf = appendIndented(buf, s)
		}
	}
	return string(buf), nil
}

// lineStart returns the offset at which the last line of buf starts.
func lineStart(buf []byte) int {
	for i := len(buf) - 1; i >= 0; i-- {
		if buf[i] == '\n' {
			return i + 1
		}
	}
	return 0
}

func lineBlank(buf []byte) bool {
	for _, c := range buf[lineStart(buf):] {
		if c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}

// restOfLine drops the blanks and the newline that end the line of a
// standalone conditional which rendered nothing.
func restOfLine(s string) string {
	t := strings.TrimLeft(s, " \t")
	if t == "" {
		return ""
	}
	if t[0] == '\n' {
		return t[1:]
	}
	return s
}

// appendIndented appends s to buf, giving every following non-empty line of
// s the indentation of the line of buf it starts on.
func appendIndented(buf []byte, s string) []byte {
	start := lineStart(buf)
	end := start
	for end < len(buf) && (buf[end] == ' ' || buf[end] == '\t') {
		end++
	}
	if end == start || !strings.Contains(s, "\n") {
		return append(buf, s...)
	}
	indent := string(buf[start:end])
	for i := 0; i < len(s); i++ {
		buf = append(buf, s[i])
		if s[i] == '\n' && i+1 < len(s) && s[i+1] != '\n' {
			buf = append(buf, indent...)
		}
	}
	return buf
}

// truthy tells whether a value selects a conditional's first branch: nil,
// false, zero numbers, empty lists and maps, and the strings "", "false",
// "no", "off" and "0" (in any case, blanks around ignored) do not.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "", "false", "no", "off", "0":
			return false
		}
		return true
	case time.Time:
		return !x.IsZero()
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int() != 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return rv.Uint() != 0
	case reflect.Float32, reflect.Float64:
		return rv.Float() != 0
	case reflect.Slice, reflect.Array, reflect.Map:
		return rv.Len() > 0
	case reflect.Pointer, reflect.Interface:
		return !rv.IsNil()
	}
	return true
}

// format renders a value: text as is, numbers and bools plainly, a time as
// "2006-01-02 15:04 -07:00" and lists joined with ", ".
func format(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case time.Time:
		return x.Format("2006-01-02 15:04 -07:00")
	case []string:
		return strings.Join(x, ", ")
	case fmt.Stringer:
		return x.String()
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() == reflect.Uint8 {
			return string(rv.Bytes())
		}
		parts := make([]string, rv.Len())
		for i := range parts {
			parts[i] = format(rv.Index(i).Interface())
		}
		return strings.Join(parts, ", ")
	case reflect.Float32:
		return strconv.FormatFloat(rv.Float(), 'f', -1, 32)
	}
	return fmt.Sprint(v)
}
