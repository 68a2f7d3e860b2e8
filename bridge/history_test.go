package bridge

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/store"
)

// TestStoreHistory: a turn cut after its tool calls has not answered, a
// final reply has; a quote across chats is no reply; a recall marks the
// message and its quote says so; an unknown one is ErrNotStored.
func TestStoreHistory(t *testing.T) {
	st, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ch := "qq:group:1"
	asked := &store.Message{Channel: ch, Role: store.RoleUser, User: "alice", Kind: "group", Text: "hi", ExternalID: "e1", Time: at}
	call := &store.Message{Channel: ch, Role: store.RoleAssistant, Kind: "group", ToolCalls: []store.ToolCall{{ID: "c", Name: "recall"}}, Time: at.Add(time.Second)}
	if err := st.Append(at, asked, call); err != nil {
		t.Fatal(err)
	}
	h := StoreHistory{Store: st, Now: func() time.Time { return at.Add(time.Hour) }}
	if h.Answered(ch, asked.ID) {
		t.Error("a turn that left only a tool call counts as answered")
	}
	reply := &store.Message{Channel: ch, Role: store.RoleAssistant, Kind: "group", Text: "hello", Quotes: []string{asked.ID}, Time: at.Add(2 * time.Second)}
	other := &store.Message{Channel: "qq:group:2", Role: store.RoleAssistant, Kind: "group", Text: "elsewhere", Quotes: []string{asked.ID}, Time: at.Add(3 * time.Second)}
	if err := st.Append(at, reply, other); err != nil {
		t.Fatal(err)
	}
	if !h.Answered(ch, asked.ID) {
		t.Error("a final reply does not count as answered")
	}
	if got := h.Quoted(reply.ID); got != "e1" {
		t.Errorf("Quoted(reply) = %q, want e1", got)
	}
	if got := h.Quoted(other.ID); got != "" {
		t.Errorf("a quote from another chat is a reply to %q", got)
	}
	if q, ok := h.Quote(ch, "e1"); !ok || q.Text != "hi" || q.User != "alice" {
		t.Errorf("Quote = %+v %v", q, ok)
	}
	if err := h.Recall(context.Background(), ch, "e1"); err != nil {
		t.Fatal(err)
	}
	if q, ok := h.Quote(ch, "e1"); !ok || q.Text != "(a recalled message)" {
		t.Errorf("the quote of a recalled message = %+v %v", q, ok)
	}
	if err := h.Recall(context.Background(), ch, "nope"); !errors.Is(err, ErrNotStored) {
		t.Errorf("recall of an unknown message: %v", err)
	}
}
