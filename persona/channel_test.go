package persona

import (
	"slices"
	"testing"

	"github.com/cyan-agent/cyan/glob"
)

func TestPageChannelOf(t *testing.T) {
	def, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		p    *Persona
		want string
	}{
		{nil, "desktop"},
		{def, "desktop"},
		{&Persona{Dir: "/home/me/Seraphina"}, "desktop:Seraphina"},
		{&Persona{Dir: "/home/me/Seraphina/"}, "desktop:Seraphina"},
		{&Persona{Dir: "/home/me/#Rin! Tohsaka"}, "desktop:Rin_Tohsaka"},
		{&Persona{Dir: "/home/me/青蓝 二号"}, "desktop:青蓝_二号"},
	} {
		if got := PageChannelOf(c.p); got != c.want {
			t.Errorf("PageChannelOf(%+v) = %q, want %q", c.p, got, c.want)
		}
	}
}

// TestPageChannels: a voice pattern naming the page's channel voices every
// character's page channel; other patterns stay as they are.
func TestPageChannels(t *testing.T) {
	voiced := func(patterns []string, ch string) bool {
		return slices.ContainsFunc(PageChannels(patterns), func(p string) bool { return glob.Channel(p, ch) })
	}
	for _, c := range []struct {
		patterns []string
		ch       string
		want     bool
	}{
		{[]string{"desktop"}, "desktop", true},
		{[]string{"desktop"}, "desktop:Seraphina", true},
		{[]string{"desktop", "qq:private:*"}, "desktop:青蓝_二号", true},
		{[]string{"qq:private:*"}, "desktop:Seraphina", false},
		{[]string{"desktop"}, "desktops", false},
		{[]string{"desktop"}, "terminal", false},
		{nil, "desktop", false},
	} {
		if got := voiced(c.patterns, c.ch); got != c.want {
			t.Errorf("%v voices %q: %v, want %v", c.patterns, c.ch, got, c.want)
		}
	}
	in := []string{"desktop"}
	PageChannels(in)
	if !slices.Equal(in, []string{"desktop"}) {
		t.Errorf("PageChannels changed its argument: %v", in)
	}
}

func FuzzSlug(f *testing.F) {
	for _, s := range []string{"Seraphina", "#Rin! Tohsaka", "青蓝", "..", "a/../b", "\u202eevil", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		s := Slug(name)
		if s == "" || s == "." || s == ".." || s[0] == '.' || s[0] == '_' || s[0] == '-' {
			t.Fatalf("Slug(%q) = %q", name, s)
		}
		for _, r := range s {
			if r == '/' || r == '\\' || r == ' ' || r == '!' || r == '#' || r == ':' || r < 0x20 {
				t.Fatalf("Slug(%q) = %q holds %q", name, s, r)
			}
		}
		if Slug(s) != s {
			t.Fatalf("Slug is not stable: %q → %q → %q", name, s, Slug(s))
		}
	})
}
