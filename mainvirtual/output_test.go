package mainvirtual

import (
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/turn"
)

func TestSplitOutput(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		parts []string
		empty bool
	}{
		{"single", "hello", []string{"hello"}, false},
		{"seed example", "line1\nline2\n@br\nline3\n@br", []string{"line1\nline2", "line3"}, false},
		{"inline break", "a @br b", []string{"a", "b"}, false},
		{"email stays whole", "write to foo@bravo.com", []string{"write to foo@bravo.com"}, false},
		{"break before punctuation", "ok@br!", []string{"ok", "!"}, false},
		{"break mid-line before CJK", "第一段@br第二段", []string{"第一段", "第二段"}, false},
		{"empty reply", "<empty_reply>", nil, true},
		{"empty reply with spaces", "  <empty_reply>\n", nil, true},
		{"nothing", "", nil, true},
		{"marker amid text is removed", "fine <empty_reply>", []string{"fine"}, false},
		{"only breaks", "@br\n@br", nil, true},
		{"self prefix stripped", "^青蓝 [2026-11-22 10:31]: 好呀", []string{"好呀"}, false},
		{"self prefix without time", "^青蓝: 好呀", []string{"好呀"}, false},
		{"other prefix kept", "^alice: hi", []string{"^alice: hi"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SplitOutput(tt.in, "青蓝")
			if strings.Join(got.Parts, "|") != strings.Join(tt.parts, "|") || got.Empty != tt.empty {
				t.Fatalf("SplitOutput(%q) = %q empty=%v, want %q empty=%v", tt.in, got.Parts, got.Empty, tt.parts, tt.empty)
			}
		})
	}
}

// streamed feeds s to a streamFilter cut into pieces of n bytes and
// returns what a reader saw, breaks shown as "|".
func streamed(t *testing.T, s string, n int) string {
	t.Helper()
	var b strings.Builder
	f := newStreamFilter(func(e turn.StreamEvent) error {
		if e.Break {
			b.WriteString("|")
		}
		b.WriteString(e.Text)
		return nil
	})
	for i := 0; i < len(s); i += n {
		if err := f.write(s[i:min(i+n, len(s))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestStreamFilter(t *testing.T) {
	tests := []struct{ in, want string }{
		{"hello", "hello"},
		{"line1\n@br\nline2", "line1|line2"},
		{"a@brb", "a@brb"},
		{"a @br", "a"},
		{"<empty_reply>", ""},
		{"x <empty_reply>", "x"},
		{"keep  inner\n\nspace ", "keep  inner\n\nspace"},
		{"mail foo@bravo.com <b>", "mail foo@bravo.com <b>"},
		{"@br\nstart", "start"},
		{"a\n@br\n@br\nb", "a|b"},
		{"ends with @", "ends with @"},
		{"ends with <empty", "ends with <empty"},
	}
	for _, tt := range tests {
		for n := 1; n <= len(tt.in); n++ {
			if got := streamed(t, tt.in, n); got != tt.want {
				t.Fatalf("stream %q in %d-byte pieces = %q, want %q", tt.in, n, got, tt.want)
			}
		}
	}
}
