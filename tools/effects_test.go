package tools

import (
	"context"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/packets"
)

// Every tool declares its effects: the registry refuses one that does not
// (nil) or names an effect that does not exist, and takes an empty list as
// "none"; a tool of another package comes through RegisterAll the same way.
func TestEveryToolDeclaresItsEffects(t *testing.T) {
	run := func(context.Context, *packets.ToolCall) (packets.Result, error) { return packets.Result{}, nil }
	r := New(Options{})
	for _, tc := range []struct {
		name    string
		effects []string
		want    string
	}{
		{"undeclared", nil, "declares no effects"},
		{"unknown", []string{"teleport"}, `"teleport" is not an effect`},
		{"none", []string{}, ""},
		{"reads", []string{packets.EffectRead}, ""},
	} {
		err := r.Register(packets.Tool{ToolSpec: packets.ToolSpec{Name: tc.name, Description: "d", Kind: packets.ToolProcess, Effects: tc.effects}, Run: run})
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	if errs := r.Replace(SourceCustom, []packets.Tool{{ToolSpec: packets.ToolSpec{Name: "bare", Description: "d", Kind: packets.ToolProcess}, Run: run}}); len(errs) != 1 {
		t.Errorf("an extra tool without effects was taken: %v", errs)
	}
	if err := r.RegisterAll([]packets.Tool{{ToolSpec: packets.ToolSpec{Name: "other", Description: "d", Kind: packets.ToolProcess}, Run: run}}); err == nil {
		t.Error("another package's tool without effects was taken")
	}
	// The built-ins of this package all declare theirs.
	b := Builtins{Paths: &Paths{roots: []rootDir{{real: "/x"}}}, Sandbox: &Sandbox{}, Scripts: nopScripts{}}
	tools := append(b.Tools(), r.ComponentTools(nil)...)
	tools = append(tools, r.OpenTool(nil))
	for _, tl := range tools {
		if tl.Effects == nil {
			t.Errorf("%s declares no effects", tl.Name)
		}
	}
	if len(tools) < 8 {
		t.Fatalf("only %d built-ins", len(tools))
	}
}

type nopScripts struct{}

func (nopScripts) Call(context.Context, string, string, map[string]any, any) error     { return nil }
func (nopScripts) CallFile(context.Context, string, string, map[string]any, any) error { return nil }
func (nopScripts) CheckFile(string) error                                              { return nil }
