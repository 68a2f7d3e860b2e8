package daemon

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/turn"
)

func TestZZMeasure(t *testing.T) {
	fake, cfg := fakeLLMConfig(t)
	d, err := New(Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer d.store.Close()
	_ = fake
	res, err := d.mv.Turn(context.Background(), turn.Incoming{Channel: "c", Text: "hi"}, turn.Listener{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res.Trace.Packet.Sections {
		t.Logf("%s %d/%d", s.Slot, s.Tokens, s.Budget)
	}
	b, _ := json.Marshal(res.Trace.Packet.Tools)
	t.Logf("tools %d bytes; system %d ctx %d", len(b), res.Trace.Packet.SystemTokens, res.Trace.Packet.Context.Tokens)
	q := fake.Requests()
	for _, r := range q {
		t.Logf("req %s tokens %d tools %d", r.Path, llmtest.CountTokens(r), len(r.Tools))
	}
}
