package mainvirtual

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/turn"
)

func TestTurnOnceReplaysTheFirstAnswer(t *testing.T) {
	r := newRig(t, nil)
	r.fake.Enqueue(llmtest.Reply{Text: "first @br second"})
	in := turn.Incoming{Channel: "home", User: "ann", Text: "hello"}
	first, err := r.mv.TurnOnce(context.Background(), in, "k-1", turn.Listener{})
	if err != nil || first.Replayed || fmt.Sprint(texts(first.Replies)) != "[first second]" {
		t.Fatalf("first call: %+v, %v", first, err)
	}
	// Retries, some at once: no new message, no model call, the same replies.
	calls := len(r.fake.Requests())
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() {
			var seen []string
			res, err := r.mv.TurnOnce(context.Background(), in, "k-1", turn.Listener{
				Stored: func(m *store.Message) { seen = append(seen, "stored "+m.ID) },
				Reply:  func(m *store.Message) { seen = append(seen, m.Text) },
			})
			if err != nil || !res.Replayed || res.Message.ID != first.Message.ID || fmt.Sprint(texts(res.Replies)) != "[first second]" {
				t.Errorf("retry: %+v, %v", res, err)
			}
			if fmt.Sprint(seen) != fmt.Sprintf("[stored %s first second]", first.Message.ID) {
				t.Errorf("the listener saw %v", seen)
			}
		})
	}
	wg.Wait()
	if n := len(r.fake.Requests()); n != calls {
		t.Fatalf("retries called the model %d times", n-calls)
	}
	all, _ := r.store.Recent("home", store.Window{Limit: 100})
	if len(all) != 3 {
		t.Fatalf("the channel holds %d messages, want 3 (one in, two out)", len(all))
	}
	// The same key with other words is a mistake, not a retry.
	if _, err := r.mv.TurnOnce(context.Background(), turn.Incoming{Channel: "home", Text: "something else"}, "k-1", turn.Listener{}); !turn.IsInvalid(err) {
		t.Fatalf("a reused key: %v", err)
	}
	// A key is per channel.
	if res, err := r.mv.TurnOnce(context.Background(), turn.Incoming{Channel: "work", Text: "hello"}, "k-1", turn.Listener{}); err != nil || res.Replayed {
		t.Fatalf("the key in another channel: %+v, %v", res, err)
	}
}

// TestTurnOnceAnswersAnInterruptedTurn: the first call stored the message
// but no answer (the model failed, or the daemon stopped); the retry answers
// the stored message instead of storing it again.
func TestTurnOnceAnswersAnInterruptedTurn(t *testing.T) {
	r := newRig(t, nil)
	r.fake.Enqueue(llmtest.Reply{Status: 400})
	in := turn.Incoming{Channel: "home", Text: "are you there?"}
	_, err := r.mv.TurnOnce(context.Background(), in, "k-2", turn.Listener{})
	var te *turn.TurnError
	if !errors.As(err, &te) || te.Message == nil {
		t.Fatalf("first call: %v", err)
	}
	r.fake.Enqueue(llmtest.Reply{Text: "yes"})
	res, err := r.mv.TurnOnce(context.Background(), in, "k-2", turn.Listener{})
	if err != nil || res.Message.ID != te.Message.ID || fmt.Sprint(texts(res.Replies)) != "[yes]" {
		t.Fatalf("retry: %+v, %v", res, err)
	}
	all, _ := r.store.Recent("home", store.Window{Limit: 100})
	if len(all) != 2 {
		t.Fatalf("the channel holds %d messages, want 2", len(all))
	}
	res, err = r.mv.TurnOnce(context.Background(), in, "k-2", turn.Listener{})
	if err != nil || !res.Replayed || fmt.Sprint(texts(res.Replies)) != "[yes]" {
		t.Fatalf("third call: %+v, %v", res, err)
	}
}

func texts(ms []*store.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Text
	}
	return out
}
