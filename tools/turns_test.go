package tools

import (
	"context"
	"slices"
	"testing"

	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/turn"
)

// TestTurnsOffersAndCallsAsTheTurnsCaller: a turn is offered what its
// caller may call (a stranger in a group is not offered the owner's
// tools), its calls run as that caller, each call is counted with its
// decision, and the result is kept as the tool says: a report is quiet,
// an opened content lives for the turn only.
func TestTurnsOffersAndCallsAsTheTurnsCaller(t *testing.T) {
	r := tableRegistry(t, nil, nil)
	for _, s := range []packets.ToolSpec{
		{Name: "note", Kind: packets.ToolProcess, Effects: []string{}, Report: true},
		{Name: "peek", Kind: packets.ToolProcess, Effects: []string{}, Transient: true},
	} {
		s.Description = "test tool " + s.Name
		if err := r.Register(packets.Tool{ToolSpec: s, Run: nop}); err != nil {
			t.Fatal(err)
		}
	}
	var counted []string
	tt := Turns{Registry: r, Count: func(tool, decision string) { counted = append(counted, tool+":"+decision) }}
	owner := turn.Query{Channel: "home", Speaker: "hareru", Kind: "private"}
	stranger := turn.Query{Channel: "g", Speaker: "bob", SpeakerID: "3003", Kind: "group"}
	names := func(ts []llm.Tool) []string {
		var out []string
		for _, x := range ts {
			out = append(out, x.Name)
		}
		return out
	}
	if o, s := names(tt.Offer(owner)), names(tt.Offer(stranger)); !slices.Contains(o, "weather") || slices.Contains(s, "weather") || len(s) == 0 {
		t.Fatalf("offered to the owner %v, to a stranger %v", o, s)
	}
	ctx := context.Background()
	if res := tt.Call(ctx, owner, llm.ToolCall{ID: "1", Name: "weather", Arguments: `{}`}); res.IsError || res.Text != "ran" {
		t.Fatalf("the owner's call: %+v", res)
	}
	if res := tt.Call(ctx, stranger, llm.ToolCall{ID: "2", Name: "weather", Arguments: `{}`}); !res.IsError {
		t.Fatalf("a stranger in a group used the network: %+v", res)
	}
	if res := tt.Call(ctx, owner, llm.ToolCall{ID: "3", Name: "note", Arguments: `{}`}); !res.Quiet || res.Transient {
		t.Fatalf("a report: %+v", res)
	}
	if res := tt.Call(ctx, owner, llm.ToolCall{ID: "4", Name: "peek", Arguments: `{}`}); !res.Transient || res.Quiet {
		t.Fatalf("an opened content: %+v", res)
	}
	if len(counted) != 4 || counted[0] != "weather:allow" || counted[1] != "weather:deny" {
		t.Fatalf("counted %v", counted)
	}
}
