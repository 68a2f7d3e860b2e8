package packets

import (
	"errors"
	"testing"
)

func TestPrivateIsOneRule(t *testing.T) {
	for _, tt := range []struct {
		kind string
		want bool
	}{{"", true}, {"private", true}, {"group", false}, {"Group", false}, {"channel", false}, {"private ", false}} {
		if got := Private(tt.kind); got != tt.want {
			t.Errorf("Private(%q) = %v, want %v", tt.kind, got, tt.want)
		}
		c := &ToolCall{Caller: Caller{Kind: tt.kind}}
		if c.Private() != tt.want || c.Reader().Private != tt.want {
			t.Errorf("kind %q: the call and its reader disagree with Private", tt.kind)
		}
	}
}

// The audience cap: what the reader may see and its audience may not is
// Confirm, and Withheld names it and where it would be posted.
func TestReaderAudience(t *testing.T) {
	owner := &Permission{Infos: []string{"**"}}
	guest := &Permission{Infos: []string{"*:own", "*:public"}}
	for _, tt := range []struct {
		name   string
		caller Caller
		owner  bool
		perm   *Permission
		scope  Scope
		want   Decision
	}{
		{"owner in private, another chat", Caller{Channel: "qq:private:1", Kind: "private"}, true, owner, Scope{Channel: "home", Owner: true}, Allow},
		{"owner in a group, another chat", Caller{Channel: "g", Kind: "group"}, true, owner, Scope{Channel: "home", Owner: true}, Confirm},
		{"owner in a group, the owner's", Caller{Channel: "g", Kind: "group"}, true, owner, Scope{Owner: true}, Confirm},
		{"owner in a group, what they said there", Caller{Channel: "g", Kind: "group"}, true, owner, Scope{Channel: "g", Owner: true}, Allow},
		{"owner in a group, the public", Caller{Channel: "g", Kind: "group"}, true, owner, Scope{}, Allow},
		{"stranger in a group, another chat", Caller{Channel: "g", Kind: "group"}, false, guest, Scope{Channel: "home", Owner: true}, Deny},
		{"stranger in private, the owner's", Caller{Channel: "p", Kind: "private"}, false, guest, Scope{Owner: true}, Deny},
		{"stranger in private, their own", Caller{Channel: "p", Kind: "private"}, false, guest, Scope{Channel: "p"}, Allow},
	} {
		r := NewReader(tt.caller, tt.owner, tt.perm, "", guest)
		if got := r.Sees(InfoHistory, tt.scope); got != tt.want {
			t.Errorf("%s: Sees = %s, want %s", tt.name, got, tt.want)
		}
		if r.MayRead(InfoHistory, tt.scope) != (tt.want == Allow) {
			t.Errorf("%s: MayRead disagrees with Sees", tt.name)
		}
		if got := r.Confirmed().Sees(InfoHistory, tt.scope); (got == Allow) != (tt.want != Deny) {
			t.Errorf("%s: once confirmed, Sees = %s", tt.name, got)
		}
	}
	r := NewReader(Caller{Channel: "qq:group:5", Kind: "group"}, true, owner, "", guest)
	var ae *AudienceError
	if err := r.Withheld("%[history/home/x]"); !errors.As(err, &ae) || ae.Channel != "qq:group:5" || ae.What != "%[history/home/x]" {
		t.Fatalf("Withheld: %v", err)
	}
	if r := NewReader(Caller{Kind: "group"}, true, owner, "", nil); r.Audience == nil || r.Sees(InfoHistory, Scope{}) != Confirm {
		t.Fatalf("with no guest permission no one else may read anything: %+v", r)
	}
}
