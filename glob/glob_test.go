package glob

import (
	"strings"
	"testing"
)

func TestPath(t *testing.T) {
	tests := []struct {
		p, s string
		want bool
	}{
		{"w*", "weather", true}, {"w*", "search", false}, {"delete_*", "delete_file", true},
		{"*", "", true}, {"", "", true}, {"", "a", false}, {"a?c", "abc", true}, {"a?c", "a/c", false},
		{"/safe/*", "/safe/a.txt", true}, {"/safe/*", "/safe/d/a.txt", false}, {"/safe/**", "/safe/d/a.txt", true},
		{"**/.env", "/a/b/.env", true}, {"*.txt", "a.txt", true}, {"*.txt", "a.txt.bak", false},
		{"a**", "a/b/c", true}, {"中*", "中文", true}, {"***", "a/b", true},
	}
	for _, tt := range tests {
		if got := Path(tt.p, tt.s); got != tt.want {
			t.Errorf("Path(%q, %q) = %v", tt.p, tt.s, got)
		}
	}
}

func TestText(t *testing.T) {
	if !Text("echo *", "echo a > /dev/null") || Path("echo *", "echo a/b") || !Text("a?c", "a/c") {
		t.Fatal("Text")
	}
}

// TestChannel is the one table of the channel-pattern syntax: what the
// router, the voice, the stream filter and config validation all mean.
func TestChannel(t *testing.T) {
	tests := []struct {
		name, p, ch string
		want        bool
	}{
		{"exact", "desktop", "desktop", true},
		{"exact differs", "desktop", "desktop2", false},
		{"star for all", "*", "qq:group:123", true},
		{"star matches colons", "qq:*", "qq:group:123", true},
		{"star matches none", "qq:*", "qq:", true},
		{"prefix differs", "qq:*", "tg:group:1", false},
		{"star in the middle", "qq:*:123", "qq:group:123", true},
		{"star in the middle differs", "qq:*:123", "qq:group:124", false},
		{"question one char", "qq:group:?23", "qq:group:123", true},
		{"question not two", "qq:group:?23", "qq:group:1123", false},
		{"question not zero", "qq:group:?23", "qq:group:23", false},
		{"question matches colon", "a?b", "a:b", true},
		{"two stars", "*:group:*", "tg:group:-100:7", true},
		{"topic channel", "tg:group:-100*", "tg:group:-1001:42", true},
		{"unicode", "群:*", "群:一", true},
		{"question is one rune", "?", "群", true},
		{"no prefix match", "qq:group:*", "qq:private:123", false},
		{"star then literal", "a*a", "a", false},
		{"star then literal, two", "a*a", "aa", true},
		{"private anywhere", "*:private:*", "tg:private:9", true},
		{"empty pattern", "", "", true},
		{"empty pattern, a channel", "", "x", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Channel(tt.p, tt.ch); got != tt.want {
				t.Errorf("Channel(%q, %q) = %v, want %v", tt.p, tt.ch, got, tt.want)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	for _, bad := range []string{"", strings.Repeat("a", MaxPattern+1), "a\nb", "a\x00"} {
		if Check(bad) == nil || CheckChannel(bad) == nil {
			t.Errorf("Check(%q) = nil", bad)
		}
	}
	if err := CheckChannel(""); err == nil || !strings.Contains(err.Error(), "qq:private:*") {
		t.Errorf("CheckChannel says %v", err)
	}
	if Check("qq:group:*") != nil {
		t.Error("a good pattern refused")
	}
}

// TestMatchIsLinear: a pattern of many stars against a long name is
// matched in time linear in their product (no backtracking blow-up); the
// test would not finish otherwise.
func TestMatchIsLinear(t *testing.T) {
	p := strings.Repeat("*a", 200) + "b"
	s := strings.Repeat("a", 5000)
	if Channel(p, s) || Path(p, s) {
		t.Fatal("matched")
	}
}

func FuzzChannel(f *testing.F) {
	f.Add("qq:*", "qq:group:1")
	f.Add("a?c*", "abc/d")
	f.Fuzz(func(t *testing.T, p, s string) {
		if len(p) > 64 || len(s) > 256 {
			return
		}
		got := Channel(p, s)
		if !strings.ContainsAny(p, "*?") && got != (p == s) {
			t.Fatalf("Channel(%q, %q) = %v for a literal", p, s, got)
		}
		if p == "*" && !got {
			t.Fatal("* must match everything")
		}
		_ = Path(p, s)
	})
}

// TestInvalidBytesStayApart: bytes that are not UTF-8 are not all one
// character; a pattern naming one does not match a name holding another.
func TestInvalidBytesStayApart(t *testing.T) {
	for _, c := range []struct {
		p, s string
		want bool
	}{
		{"\xd1", "\xfd", false},
		{"files/\xd1", "files/\xfd", false},
		{"files/\xd1", "files/\xd1", true},
		{"files/?", "files/\xfd", true},
		{"\ufffd", "\xfd", false},
	} {
		if got := Path(c.p, c.s); got != c.want {
			t.Errorf("Path(%q, %q) = %v, want %v", c.p, c.s, got, c.want)
		}
		if got := Channel(c.p, c.s); got != c.want {
			t.Errorf("Channel(%q, %q) = %v, want %v", c.p, c.s, got, c.want)
		}
	}
}
