package store

import (
	"errors"
	"testing"
	"time"
)

// TestEditExternalAndMarkRecalledID: an edit replaces the text in place
// (same id, same place, Edited set, tokens scaled) and only in its
// channel; the agent's own message is marked recalled by its stored id.
func TestEditExternalAndMarkRecalledID(t *testing.T) {
	s := openDir(t, t.TempDir())
	defer s.Close()
	m := &Message{Channel: "tg:group:1", Role: RoleUser, User: "amy", Text: "who knows", Tokens: 4, ExternalID: "7"}
	other := &Message{Channel: "tg:group:2", Role: RoleUser, User: "amy", Text: "same id elsewhere", ExternalID: "7"}
	reply := &Message{Channel: "tg:group:1", Role: RoleAssistant, User: "cyan", Text: "I do"}
	if err := s.Append(t0, m, other, reply); err != nil {
		t.Fatal(err)
	}
	at := t0.Add(time.Minute)
	got, err := s.EditExternal("tg:group:1", "7", "who knows the time @cyan", 0, at)
	if err != nil || got.ID != m.ID || got.Text != "who knows the time @cyan" || !got.Edited.Equal(at) || got.Tokens <= 4 {
		t.Fatalf("edit: %+v %v", got, err)
	}
	if o, _ := s.Get(other.ID); o.Text != "same id elsewhere" || !o.Edited.IsZero() {
		t.Errorf("another channel's message changed: %+v", o)
	}
	recent, _ := s.Recent("tg:group:1", Window{Limit: 5})
	if len(recent) != 2 || recent[0].Text != "who knows the time @cyan" {
		t.Errorf("recent after the edit: %+v", recent)
	}
	if _, err := s.EditExternal("tg:group:1", "nope", "x", 0, at); !errors.Is(err, ErrNotFound) {
		t.Errorf("an unknown id: %v", err)
	}
	r, err := s.MarkRecalledID("tg:group:1", reply.ID, at)
	if err != nil || !r.Recalled.Equal(at) || r.Text != "I do" {
		t.Fatalf("recall of the agent's message: %+v %v", r, err)
	}
	if _, err := s.MarkRecalledID("tg:group:2", reply.ID, at); !errors.Is(err, ErrNotFound) {
		t.Errorf("a recall in the wrong channel: %v", err)
	}
	if _, err := s.MarkRecalledID("tg:group:1", "not-an-id", at); !errors.Is(err, ErrInvalid) {
		t.Errorf("a malformed id: %v", err)
	}
}
