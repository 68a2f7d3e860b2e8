package mainvirtual

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/turn"
)

func TestRecordThenRespondSeesTheWholeGroup(t *testing.T) {
	r := newRig(t, nil)
	ctx := context.Background()
	var last string
	for i, line := range []struct{ user, id, text string }{
		{"alice", "qq:1", "anyone seen the cat?"},
		{"bob", "qq:2", "it is on the roof"},
		{"alice", "qq:1", "@青蓝 can you help?"},
	} {
		m, err := r.mv.Record(ctx, Recorded{Incoming: turn.Incoming{Channel: "qq:group:5", User: line.user, UserID: line.id, Kind: turn.KindGroup, Text: line.text},
			ExternalID: string(rune('a' + i))})
		if err != nil {
			t.Fatal(err)
		}
		last = m.ID
	}
	if _, err := r.mv.Record(ctx, Recorded{Incoming: turn.Incoming{Channel: "qq:group:5", User: "bob", Kind: turn.KindGroup, Text: "again"}, ExternalID: "b"}); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("a second message with the same external id: %v, want ErrDuplicate", err)
	}
	if n := len(r.fake.Requests()); n != 0 {
		t.Fatalf("recording called the model %d times", n)
	}
	r.fake.Enqueue(llmtest.Reply{Text: "the roof, alice"})
	res, err := r.mv.Respond(ctx, "qq:group:5", last, "alice", "qq:1", turn.KindGroup, turn.Listener{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Replies) != 1 || res.Replies[0].ReplyTo != last {
		t.Fatalf("replies = %+v", res.Replies)
	}
	req := r.fake.Requests()[0]
	conv := req.Messages[len(req.Messages)-1].Content
	for _, want := range []string{"^alice", "^bob", "on the roof", "can you help?"} {
		if !strings.Contains(conv, want) {
			t.Errorf("the context lacks %q:\n%s", want, conv)
		}
	}
	if err := r.mv.Note(ctx, "qq:group:5", turn.KindGroup, "your message could not be delivered"); err != nil {
		t.Fatal(err)
	}
	r.fake.Enqueue(llmtest.Reply{Text: "sorry"})
	m, _ := r.mv.Record(ctx, Recorded{Incoming: turn.Incoming{Channel: "qq:group:5", User: "alice", Kind: turn.KindGroup, Text: "hello?"}})
	if _, err := r.mv.Respond(ctx, "qq:group:5", m.ID, "alice", "qq:1", turn.KindGroup, turn.Listener{}); err != nil {
		t.Fatal(err)
	}
	req = r.fake.Requests()[1]
	if all := req.Messages[len(req.Messages)-1].Content; !strings.Contains(all, "^system") || !strings.Contains(all, "could not be delivered") {
		t.Errorf("the model is not told of the failed delivery:\n%s", all)
	}
	if _, err := r.mv.Respond(ctx, "qq:group:6", m.ID, "alice", "", turn.KindGroup, turn.Listener{}); err == nil {
		t.Error("answering a message of another channel succeeded")
	}
}

func TestWhatTheAnswerDidNotSeeComesAfterIt(t *testing.T) {
	r := newRig(t, nil)
	ctx := context.Background()
	rec := func(text string) string {
		m, err := r.mv.Record(ctx, Recorded{Incoming: turn.Incoming{Channel: "g", User: "amy", Kind: turn.KindGroup, Text: text}})
		if err != nil {
			t.Fatal(err)
		}
		return m.ID
	}
	first := rec("question one")
	gate := make(chan struct{})
	r.fake.SetDefault(func(llmtest.Request) llmtest.Reply { <-gate; return llmtest.Reply{Text: "answer one"} })
	done := make(chan error, 1)
	go func() {
		_, err := r.mv.Respond(ctx, "g", first, "amy", "", turn.KindGroup, turn.Listener{})
		done <- err
	}()
	for len(r.fake.Requests()) == 0 {
		time.Sleep(time.Millisecond)
	}
	later := rec("said while it thought")
	close(gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	r.fake.SetDefault(nil)
	if _, err := r.mv.Respond(ctx, "g", later, "amy", "", turn.KindGroup, turn.Listener{}); err != nil {
		t.Fatal(err)
	}
	msgs := r.fake.Requests()[1].Messages
	last := msgs[len(msgs)-1]
	if last.Role != llm.RoleUser || !strings.Contains(last.Content, "said while it thought") || !strings.HasSuffix(msgs[len(msgs)-2].Content, "answer one") {
		t.Fatalf("the context does not end with what the answer did not see: %+v", msgs[1:])
	}
}

func TestImagesGoWithTheMessagesTheTurnAnswers(t *testing.T) {
	pic := llm.Image{MIME: "image/png", Data: []byte("\x89PNG...")}
	r := newRig(t, func(o *Options) {
		o.Images = func(text string) []llm.Image {
			if strings.Contains(text, "%[images/") {
				return []llm.Image{pic}
			}
			return nil
		}
	})
	ctx := context.Background()
	rec := func(text string) string {
		m, err := r.mv.Record(ctx, Recorded{Incoming: turn.Incoming{Channel: "g", User: "amy", Kind: turn.KindGroup, Text: text}})
		if err != nil {
			t.Fatal(err)
		}
		return m.ID
	}
	first := rec("old picture %[images/qq/aaaaaaaaaaaaaaaaaaaaaaaa.png]")
	if _, err := r.mv.Respond(ctx, "g", first, "amy", "", turn.KindGroup, turn.Listener{}); err != nil {
		t.Fatal(err)
	}
	rec("what is this? %[images/qq/bbbbbbbbbbbbbbbbbbbbbbbb.png]")
	last := rec("and this %[images/qq/cccccccccccccccccccccccc.png]")
	if _, err := r.mv.Respond(ctx, "g", last, "amy", "", turn.KindGroup, turn.Listener{}); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range r.fake.Requests()[1].Messages {
		n += len(m.Images)
	}
	if n != 2 {
		t.Errorf("the second turn passed %d images, want the 2 it answers (not the one already answered)", n)
	}
}

// TestRecordOpensANewChannelWithTheGreeting: a bridge's first message in
// a chat opens it with the persona's greeting, stored first (and so sent
// through the router like any outgoing message); a later one does not.
func TestRecordOpensANewChannelWithTheGreeting(t *testing.T) {
	greeted := 0
	r := newRig(t, func(o *Options) {
		o.Greeting = func(q turn.Query) (string, error) {
			greeted++
			return "Hello, " + q.Speaker + "!", nil
		}
	})
	ctx := context.Background()
	for _, text := range []string{"first", "second"} {
		if _, err := r.mv.Record(ctx, Recorded{Incoming: turn.Incoming{Channel: "qq:private:7", User: "amy", UserID: "qq:7", Text: text}}); err != nil {
			t.Fatal(err)
		}
	}
	msgs, _ := r.store.Recent("qq:private:7", store.Window{Limit: 10})
	if len(msgs) != 3 || msgs[0].Role != store.RoleAssistant || !msgs[0].Proactive || msgs[0].Text != "Hello, amy!" || msgs[1].Text != "first" || greeted != 1 {
		t.Fatalf("greeted %d times; messages %+v", greeted, msgs)
	}
	if _, err := r.mv.Record(ctx, Recorded{Incoming: turn.Incoming{Channel: "qq:private:8", Text: "hi", NoGreeting: true}}); err != nil {
		t.Fatal(err)
	}
	if msgs, _ := r.store.Recent("qq:private:8", store.Window{Limit: 10}); len(msgs) != 1 {
		t.Errorf("NoGreeting: %+v", msgs)
	}
}

// admitNone refuses every turn before the model is asked.
type admitNone struct{ Limiter }

func (admitNone) Admit(turn.Query) (time.Duration, string) {
	return 30 * time.Second, "over the message limit"
}

// TestRespondIsAdmittedByTheLimits: a bridge's turn is refused by the
// message limit as an API turn is, its message kept, the model not asked.
func TestRespondIsAdmittedByTheLimits(t *testing.T) {
	r := newRig(t, func(o *Options) { o.Limits = admitNone{} })
	ctx := context.Background()
	m, err := r.mv.Record(ctx, Recorded{Incoming: turn.Incoming{Channel: "qq:group:5", User: "amy", Kind: turn.KindGroup, Text: "@bot hi"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.mv.Respond(ctx, "qq:group:5", m.ID, "amy", "qq:1", turn.KindGroup, turn.Listener{})
	var lim *turn.Limited
	if !errors.As(err, &lim) || lim.RetryAfter != 30*time.Second || lim.Message.ID != m.ID {
		t.Fatalf("Respond = %v, want *Limited for the recorded message", err)
	}
	if n := len(r.fake.Requests()); n != 0 {
		t.Errorf("the model was asked %d times", n)
	}
}
