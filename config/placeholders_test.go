package config

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var ownerHole = regexp.MustCompile(`(id:[a-z][a-z0-9_-]*:)<[^>"]*>`)

// FillOwnerPlaceholders puts a made-up user id in place of each owner
// placeholder of the docs ("id:qq:<your QQ number>" → "id:qq:20001"), as a
// reader does with their own.
func FillOwnerPlaceholders(yaml string) string {
	n := 20000
	return ownerHole.ReplaceAllStringFunc(yaml, func(m string) string {
		n++
		return ownerHole.FindStringSubmatch(m)[1] + strconv.Itoa(n)
	})
}

// Every entry that could never mean the owner is refused with what to
// write, by CheckOwner (tools.ParseOwners uses it) and by the config's
// check, which also knows the bridges.
func TestOwnerEntries(t *testing.T) {
	bridges := "bridges:\n  onebot:\n    - {name: qq, mode: reverse, access_token: tok}\n  telegram:\n    - {name: tg, token: \"1:x\"}\n"
	cases := []struct {
		name, entry, want string // want "" : accepted
		own               bool   // CheckOwner alone refuses it
	}{
		{"local", "local", "", false},
		{"a name", "hareru", "", false},
		{"an id", "id:qq:1001", "", false},
		{"empty", "  ", "empty", true},
		{"id: alone", "id:", "names no account", true},
		{"no user id after the bridge", "id:qq:", `no user id after the bridge "qq"`, true},
		{"no user id part (warned of)", "id:qq2", "", false},
		{"a bridge with no user id part", "id:qq", `"id:qq" names no user id, so it would never match anyone: write id:<bridge>:<user id> (the bridges are named qq, tg; e.g. id:qq:<user id>)`, false},
		{"a placeholder", "id:qq:<your QQ number>", "the docs' placeholder", true},
		{"a Telegram placeholder", "id:tg:<your Telegram user id>", "the docs' placeholder", true},
		{"the README's QQ sample", "id:qq:12345678", "one of the README's examples", true},
		{"the README's Telegram sample", "id:tg:987654321", "one of the README's examples", true},
		{"an unknown bridge", "id:telegram:4242", `names no bridge "telegram", so it would never match anyone; the bridges are named qq, tg`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckOwner(c.entry)
			if (err != nil) != c.own || (err != nil && !strings.Contains(err.Error(), c.want)) {
				t.Errorf("CheckOwner(%q) = %v", c.entry, err)
			}
			_, err = loadYAML(t, bridges+"permissions:\n  owners: [local, "+strconv.Quote(c.entry)+"]\n")
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "permissions.owners")):
				t.Errorf("config check: %v, want it to say %q", err, c.want)
			}
		})
	}
	c, err := loadYAML(t, bridges+"permissions:\n  owners: [local, \"id:qq2\", \"id:qq:1\"]\n")
	if w := c.OwnerWarnings(); err != nil || len(w) != 1 || !strings.Contains(w[0], `"id:qq2" names no bridge and no user id apart`) || !strings.Contains(w[0], "the bridges are named qq, tg: write e.g. id:qq:qq2") {
		t.Errorf("warnings: %q (%v)", w, err)
	}
	if got := FillOwnerPlaceholders(`[local, "id:qq:<your QQ number>", "id:tg:<your Telegram user id>"]`); got != `[local, "id:qq:20001", "id:tg:20002"]` {
		t.Errorf("FillOwnerPlaceholders: %s", got)
	}
}

// CheckOwner reads what a user typed: it never panics, and what it accepts
// has no placeholder left in and is not the README's sample.
func FuzzCheckOwner(f *testing.F) {
	for _, s := range []string{"local", "id:qq:1", "id:", "id:qq:", "id:qq:<your QQ number>", "id:qq:12345678", "hareru"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, e string) {
		if CheckOwner(e) == nil && (strings.ContainsAny(e, "<>") || strings.TrimSpace(e) == "id:qq:12345678") {
			t.Fatalf("accepted %q", e)
		}
	})
}
