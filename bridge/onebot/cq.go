package onebot

import "strings"

// Segment is one OneBot message segment: {"type": …, "data": {…}}. Every
// value is a string, as the spec keeps them for CQ-code conversion.
type Segment struct {
	Type string            `json:"type"`
	Data map[string]string `json:"data"`
}

// ParseCQ reads a message in the string format: text with CQ codes such as
// "[CQ:face,id=178]". As the spec says, the function name runs from "[CQ:"
// to the first "," or "]", the parameters from there to "]", split at ","
// and each at its first "="; text and values are unescaped (&amp; &#91;
// &#93; &#44;). Text that only looks like a code ("[CQ:" with no "]") stays
// text.
func ParseCQ(s string) []Segment {
	var out []Segment
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			out = append(out, Segment{Type: "text", Data: map[string]string{"text": unescapeCQ(text.String())}})
			text.Reset()
		}
	}
	for len(s) > 0 {
		i := strings.Index(s, "[CQ:")
		if i < 0 {
			text.WriteString(s)
			break
		}
		end := strings.IndexByte(s[i:], ']')
		if end < 0 {
			text.WriteString(s)
			break
		}
		text.WriteString(s[:i])
		code := s[i+4 : i+end]
		s = s[i+end+1:]
		name, params, _ := strings.Cut(code, ",")
		if name == "" {
			text.WriteString("[CQ:" + code + "]")
			continue
		}
		flush()
		seg := Segment{Type: name, Data: map[string]string{}}
		if params != "" {
			for _, kv := range strings.Split(params, ",") {
				k, v, _ := strings.Cut(kv, "=")
				if k != "" {
					seg.Data[k] = unescapeCQ(v)
				}
			}
		}
		out = append(out, seg)
	}
	flush()
	return out
}

// RenderCQ writes segments in the string format, escaping text and values.
func RenderCQ(segs []Segment) string {
	var b strings.Builder
	for _, s := range segs {
		if s.Type == "text" {
			b.WriteString(escapeCQ(s.Data["text"], false))
			continue
		}
		b.WriteString("[CQ:" + s.Type)
		for _, k := range sortedKeys(s.Data) {
			b.WriteString("," + k + "=" + escapeCQ(s.Data[k], true))
		}
		b.WriteByte(']')
	}
	return b.String()
}

var (
	textEscaper  = strings.NewReplacer("&", "&amp;", "[", "&#91;", "]", "&#93;")
	valueEscaper = strings.NewReplacer("&", "&amp;", "[", "&#91;", "]", "&#93;", ",", "&#44;")
	cqUnescaper  = strings.NewReplacer("&#44;", ",", "&#91;", "[", "&#93;", "]", "&amp;", "&")
)

func escapeCQ(s string, value bool) string {
	if value {
		return valueEscaper.Replace(s)
	}
	return textEscaper.Replace(s)
}

func unescapeCQ(s string) string {
	if !strings.Contains(s, "&") {
		return s
	}
	return cqUnescaper.Replace(s)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}
