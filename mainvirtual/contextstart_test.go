package mainvirtual

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/llmtest"
)

// startAt is a ContextStarter that bounds the context at a fixed message.
type startAt struct {
	id  string
	err error
}

func (s *startAt) ContextStart(context.Context, string, time.Time) (string, error) {
	return s.id, s.err
}

func TestContextStartsAtThePreviousTopic(t *testing.T) {
	start := &startAt{}
	r := newRig(t, func(o *Options) { o.ContextStart = start })
	r.fake.Enqueue(llmtest.Reply{Text: "a1"}, llmtest.Reply{Text: "a2"}, llmtest.Reply{Text: "a3"}, llmtest.Reply{Text: "a4"})
	r.turn(t, "amy", "old topic")
	second := r.turn(t, "amy", "previous topic")
	start.id = second.Message.ID
	r.turn(t, "amy", "current topic")
	sys := lastRequest(t, r.fake)
	ctx := ""
	for _, m := range sys.Messages[1:] {
		ctx += m.Content + "\n"
	}
	if strings.Contains(ctx, "old topic") || !strings.Contains(ctx, "previous topic") || !strings.Contains(ctx, "current topic") {
		t.Fatalf("context:\n%s", ctx)
	}
	tr, _ := r.mv.LastTrace("home")
	if tr.Packet.Context.Start != second.Message.ID || len(tr.Packet.Context.Included) != 3 { // previous topic, a2, current topic
		t.Fatalf("trace context %+v", tr.Packet.Context)
	}
	// A failing starter does not fail the turn: the context is unbounded and
	// the trace says why.
	start.id, start.err = "", errors.New("event log unavailable")
	r.turn(t, "amy", "again")
	tr, _ = r.mv.LastTrace("home")
	if tr.Packet.Context.StartError != "event log unavailable" || len(tr.Packet.Context.Included) != 7 {
		t.Fatalf("trace context %+v", tr.Packet.Context)
	}
}
