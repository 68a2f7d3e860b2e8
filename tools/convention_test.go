package tools

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/cyan-agent/cyan/packets"
)

// TestTheRunFunctionSeesTheResolvedCaller: every part's run function gets
// one *packets.ToolCall, the caller as the registry resolved it — whether
// it is the owner, its permission object, its component, its reader.
func TestTheRunFunctionSeesTheResolvedCaller(t *testing.T) {
	r := tableRegistry(t, nil, nil)
	var got *packets.ToolCall
	if err := r.RegisterAll([]packets.Tool{{ToolSpec: packets.ToolSpec{Name: "probe", Description: "d", Kind: packets.ToolProcess, Effects: []string{}},
		Run: func(_ context.Context, c *packets.ToolCall) (packets.Result, error) {
			got = c
			return packets.Result{}, nil
		}}}); err != nil {
		t.Fatal(err)
	}
	watcher := &packets.Permission{Tools: []packets.Rule{{Pattern: "**"}}, Infos: []string{"history:channel:home"}}
	r.SetComponent("observer:w", watcher)
	for _, tc := range []struct {
		name      string
		caller    packets.Caller
		owner     bool
		perm      *packets.Permission
		component string
		private   bool
	}{
		{"owner by id in a group", ownerInGroup[0], true, r.OwnerPermission(), "", false},
		{"stranger in private", guestCallers[3], false, r.guest, "", true},
		{"observer", packets.Caller{Process: "observer:w"}, false, watcher, "observer:w", true},
		{"unregistered process", packets.Caller{Process: "main-virtual", Speaker: "bob", Kind: "group"}, false, r.guest, "", false},
	} {
		got = nil
		o := r.Call(context.Background(), tc.caller, "probe", json.RawMessage(`{"x":1}`))
		if o.Failed() || got == nil {
			t.Fatalf("%s: %+v", tc.name, o)
		}
		if got.Tool != "probe" || string(got.Args) != `{"x":1}` || got.Caller != tc.caller || got.Owner != tc.owner || got.Perm != tc.perm ||
			got.Component != tc.component || got.Private() != tc.private {
			t.Errorf("%s: call %+v", tc.name, got)
		}
		if rd := got.Reader(); rd != r.Reader(tc.caller) {
			t.Errorf("%s: reader %+v, registry's %+v", tc.name, rd, r.Reader(tc.caller))
		}
	}
}

// TestOfferAsksThePart: a tool whose part says it is not offered to this
// caller now (workspace_usage with an empty workspace) is left out of
// Offer, and only of Offer.
func TestOfferAsksThePart(t *testing.T) {
	r := tableRegistry(t, nil, nil)
	held := map[string]bool{"home": true}
	if err := r.Register(packets.Tool{ToolSpec: packets.ToolSpec{Name: "usage", Description: "d", Kind: packets.ToolProcess, Effects: []string{}},
		Run: nop, Offered: func(c *packets.ToolCall) bool { return held[c.Caller.Channel] }}); err != nil {
		t.Fatal(err)
	}
	names := func(c packets.Caller) []string {
		var out []string
		for _, s := range r.Offer(c) {
			out = append(out, s.Name)
		}
		return out
	}
	if n := names(packets.Caller{Speaker: "hareru", Kind: "private", Channel: "home"}); !slices.Contains(n, "usage") || !slices.IsSorted(n) {
		t.Errorf("home: %v", n)
	}
	if n := names(packets.Caller{Speaker: "hareru", Kind: "private", Channel: "elsewhere"}); slices.Contains(n, "usage") || !slices.Contains(n, "speak") {
		t.Errorf("elsewhere: %v", n)
	}
	if o := r.Call(context.Background(), packets.Caller{Speaker: "hareru", Kind: "private", Channel: "elsewhere"}, "usage", nil); o.Failed() {
		t.Errorf("a call of a tool not offered: %+v", o)
	}
}

// TestATurnsReadGoesToPulledInfo: what a turn's call opened (a transient
// result: read_file's path, open's ref) goes to Options.Pull with its
// text; a failed or refused call, a call that is not transient and a call
// the owner makes by hand pull nothing.
func TestATurnsReadGoesToPulledInfo(t *testing.T) {
	type pull struct{ channel, ref, text string }
	var pulls []pull
	owners, _ := ParseOwners([]string{"hareru"})
	r := New(Options{Owners: owners, Pull: func(channel, ref, text string) { pulls = append(pulls, pull{channel, ref, text}) }})
	fail := false
	read := func(_ context.Context, c *packets.ToolCall) (packets.Result, error) {
		if fail {
			return packets.Result{}, errors.New("no such file")
		}
		return packets.Result{OutputText: "line one\nline two"}, nil
	}
	if err := r.RegisterAll([]packets.Tool{
		{ToolSpec: packets.ToolSpec{Name: "read_file", Description: "d", Kind: packets.ToolProcess, Effects: []string{packets.EffectRead}, PathParams: []string{"path"}}, Run: read},
		{ToolSpec: packets.ToolSpec{Name: "open", Description: "d", Kind: packets.ToolProcess, Effects: []string{}, Transient: true}, Run: read},
		{ToolSpec: packets.ToolSpec{Name: "note", Description: "d", Kind: packets.ToolProcess, Effects: []string{}}, Run: read},
	}); err != nil {
		t.Fatal(err)
	}
	owner := packets.Caller{Speaker: "hareru", Kind: "private", Channel: "home"}
	stranger := packets.Caller{Speaker: "bob", Kind: "group", Channel: "g"}
	ctx := context.Background()
	r.Call(ctx, owner, "read_file", json.RawMessage(`{"path":"/w/a.txt"}`))
	r.Call(ctx, owner, "open", json.RawMessage(`{"ref":"%[event 20260301]"}`))
	r.Call(ctx, owner, "note", json.RawMessage(`{"path":"/w/b.txt"}`))
	r.Call(ctx, stranger, "read_file", json.RawMessage(`{"path":"/w/c.txt"}`)) // denied
	r.CallAsOwner(ctx, owner, "read_file", json.RawMessage(`{"path":"/w/d.txt"}`))
	fail = true
	r.Call(ctx, owner, "read_file", json.RawMessage(`{"path":"/w/e.txt"}`))
	want := []pull{{"home", "/w/a.txt", "line one\nline two"}, {"home", "%[event 20260301]", "line one\nline two"}}
	if !slices.Equal(pulls, want) {
		t.Fatalf("pulled %+v, want %+v", pulls, want)
	}
}

// TestModelToolsJoinTitleAndDescription: the model reads a tool's title
// and description as one, the title first when it says more.
func TestModelToolsJoinTitleAndDescription(t *testing.T) {
	r := New(Options{})
	if err := r.RegisterAll([]packets.Tool{
		{ToolSpec: packets.ToolSpec{Name: "a", Title: "read a file", Description: "Read a text file.", Kind: packets.ToolProcess, Effects: []string{}}, Run: nop},
		{ToolSpec: packets.ToolSpec{Name: "b", Title: "same", Description: "same", Kind: packets.ToolProcess, Effects: []string{}}, Run: nop},
		{ToolSpec: packets.ToolSpec{Name: "c", Description: "only a description", Kind: packets.ToolProcess, Effects: []string{},
			Parameters: json.RawMessage(`{"type":"object"}`)}, Run: nop},
	}); err != nil {
		t.Fatal(err)
	}
	got := r.ModelTools(packets.Caller{Owner: true})
	if len(got) != 3 || got[0].Description != "read a file. Read a text file." || got[1].Description != "same" ||
		got[2].Description != "only a description" || string(got[2].Parameters) != `{"type":"object"}` {
		t.Fatalf("%+v", got)
	}
}
