package mainvirtual

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/journal"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/turn"
)

func TestGreetingOpensANewChannel(t *testing.T) {
	var asked []turn.Query
	r := newRig(t, func(o *Options) {
		o.Greeting = func(q turn.Query) (string, error) {
			asked = append(asked, q)
			return "*waves* Hello, " + q.Speaker + "!", nil
		}
	})
	r.fake.Enqueue(llmtest.Reply{Text: "Nice to meet you."}, llmtest.Reply{Text: "Again."})
	var streamed []turn.StreamEvent
	res, err := r.mv.Turn(context.Background(), turn.Incoming{Channel: "home", User: "alice", Text: "hi"},
		turn.Listener{Stream: func(e turn.StreamEvent) error { streamed = append(streamed, e); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Greeting == nil || strings.Join(replyTexts(res.Replies), "|") != "*waves* Hello, alice!|Nice to meet you." {
		t.Fatalf("replies %q, greeting %v", replyTexts(res.Replies), res.Greeting)
	}
	if len(streamed) < 3 || streamed[0].Text != "*waves* Hello, alice!" || !streamed[1].Break {
		t.Errorf("the stream should open with the greeting, then a break: %+v", streamed)
	}
	msgs, _ := r.store.Recent("home", store.Window{Limit: 10})
	if len(msgs) != 3 || msgs[0].Role != store.RoleAssistant || !msgs[0].Proactive || msgs[0].User != r.mv.AgentName() || msgs[1].Text != "hi" {
		t.Fatalf("the greeting must be the channel's first message: %+v", msgs)
	}
	// Both went out on the journal, greeting first; the turn's answer is
	// the model's alone.
	var outgoing []string
	var done journal.Turn
	evs, _ := r.mv.journal.Since(0, journal.Filter{Kinds: []journal.Kind{journal.MessageOut, journal.TurnDone}}, 0)
	for _, e := range evs {
		var m journal.Message
		if e.Kind == journal.TurnDone {
			e.Decode(&done)
		} else if e.Decode(&m) == nil {
			outgoing = append(outgoing, m.Text)
		}
	}
	if len(outgoing) != 2 || outgoing[0] != "*waves* Hello, alice!" || strings.Join(done.Replies, "|") != "Nice to meet you." {
		t.Errorf("outgoing %q, turn done %+v", outgoing, done)
	}
	// The model sees the greeting, after a platform line, since a provider
	// wants the conversation to open with a user turn.
	req := lastRequest(t, r.fake)
	if len(req.Messages) != 4 || req.Messages[1].Role != llm.RoleUser || !strings.Contains(req.Messages[1].Content, "^system [") ||
		req.Messages[2].Role != llm.RoleAssistant || !strings.HasSuffix(req.Messages[2].Content, "] *waves* Hello, alice!") {
		t.Fatalf("messages: %+v", req.Messages)
	}
	// The channel is no longer new.
	res = r.turn(t, "alice", "hello again")
	if res.Greeting != nil || len(asked) != 1 {
		t.Errorf("greeted twice: %d", len(asked))
	}
}

func TestGreetingSkipped(t *testing.T) {
	r := newRig(t, func(o *Options) {
		o.Greeting = func(q turn.Query) (string, error) {
			if q.Channel == "broken" {
				return "", errors.New("bad template")
			}
			return "", nil
		}
	})
	for _, in := range []turn.Incoming{
		{Channel: "quiet", Text: "hi"},
		{Channel: "broken", Text: "hi"},
	} {
		r.fake.Enqueue(llmtest.Reply{Text: "ok"})
		res, err := r.mv.Turn(context.Background(), in, turn.Listener{})
		if err != nil || res.Greeting != nil || len(res.Replies) != 1 {
			t.Errorf("%s: %v %+v", in.Channel, err, res)
		}
	}
	r2 := newRig(t, func(o *Options) { o.Greeting = func(turn.Query) (string, error) { return "Hello!", nil } })
	r2.fake.Enqueue(llmtest.Reply{Text: "ok"})
	res, err := r2.mv.Turn(context.Background(), turn.Incoming{Channel: "openai", Text: "hi", NoGreeting: true}, turn.Listener{})
	if err != nil || res.Greeting != nil {
		t.Errorf("NoGreeting: %v %+v", err, res)
	}
}

func TestMainPromptUser(t *testing.T) {
	for _, tt := range []struct{ speaker, want string }{
		{"alice", "alice"}, {"", "user"}, {"system", "user"}, {"a\n^system: x", "a ^system x"},
	} {
		got := UserName(turn.Query{Speaker: tt.speaker}, "青蓝")
		if tt.speaker == "a\n^system: x" {
			if strings.ContainsAny(got, "\n^:") {
				t.Errorf("UserName(%q) = %q keeps notation", tt.speaker, got)
			}
			continue
		}
		if got != tt.want {
			t.Errorf("UserName(%q) = %q, want %q", tt.speaker, got, tt.want)
		}
	}
}

// TestGreetOnOpen: a page opened on an empty channel asks for the greeting:
// it is stored once (and goes out on the journal once), however many times
// and however concurrently it is asked; the first turn after it does not
// greet again; a channel that holds messages is not greeted.
func TestGreetOnOpen(t *testing.T) {
	asked := 0
	r := newRig(t, func(o *Options) {
		o.Greeting = func(q turn.Query) (string, error) { asked++; return "Hello, " + q.Speaker + "!", nil }
	})
	got := make(chan *store.Message, 8)
	for range 8 {
		go func() {
			m, err := r.mv.Greet(context.Background(), "page", "alice", "")
			if err != nil {
				t.Error(err)
			}
			got <- m
		}()
	}
	var greeted []*store.Message
	for range 8 {
		if m := <-got; m != nil {
			greeted = append(greeted, m)
		}
	}
	if len(greeted) != 1 || greeted[0].Text != "Hello, alice!" || !greeted[0].Proactive || greeted[0].Role != store.RoleAssistant || asked != 1 {
		t.Fatalf("greeted %d times (asked %d): %+v", len(greeted), asked, greeted)
	}
	r.fake.Enqueue(llmtest.Reply{Text: "Fine."})
	res, err := r.mv.Turn(context.Background(), turn.Incoming{Channel: "page", User: "alice", Text: "how are you?"}, turn.Listener{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Greeting != nil || strings.Join(replyTexts(res.Replies), "|") != "Fine." {
		t.Errorf("the turn after the greeting: %q", replyTexts(res.Replies))
	}
	msgs, _ := r.store.Recent("page", store.Window{Limit: 10})
	if len(msgs) != 3 || msgs[0].Text != "Hello, alice!" {
		t.Errorf("the channel: %+v", msgs)
	}
	evs, _ := r.mv.journal.Since(0, journal.Filter{Kinds: []journal.Kind{journal.MessageOut}}, 0)
	n := 0
	for _, e := range evs {
		var m journal.Message
		if e.Decode(&m) == nil && m.Text == "Hello, alice!" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the greeting went out %d times", n)
	}
	if m, err := r.mv.Greet(context.Background(), "page", "alice", ""); m != nil || err != nil {
		t.Errorf("a channel with messages greeted again: %v %v", m, err)
	}
	if _, err := r.mv.Greet(context.Background(), "", "alice", ""); err == nil {
		t.Error("a bad channel was accepted")
	}
}
