package store

import (
	"errors"
	"testing"
	"time"
)

// A recalled message stays in the store, marked with when it was
// withdrawn (the first time only); it is found by its platform id.
func TestMarkRecalled(t *testing.T) {
	s := openDir(t, t.TempDir())
	defer s.Close()
	m := &Message{Channel: "qq:group:1", Role: RoleUser, User: "amy", Text: "oops", ExternalID: "4242"}
	other := &Message{Channel: "qq:group:2", Role: RoleUser, User: "amy", Text: "elsewhere", ExternalID: "4242"}
	if err := s.Append(t0, m, other); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ByExternal("qq:group:1", "4242"); err != nil || got.ID != m.ID || got.IsRecalled() {
		t.Fatalf("by external id: %+v %v", got, err)
	}
	at := t0.Add(time.Minute)
	if _, err := s.MarkRecalled("qq:group:1", "4242", at); err != nil {
		t.Fatal(err)
	}
	if _, err := s.MarkRecalled("qq:group:1", "4242", at.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(m.ID)
	if err != nil || !got.Recalled.Equal(at) || got.Text != "oops" {
		t.Fatalf("after the recall: %+v %v", got, err)
	}
	if o, _ := s.Get(other.ID); o.IsRecalled() {
		t.Error("the same platform id in another channel was marked")
	}
	if _, err := s.MarkRecalled("qq:group:1", "nope", at); !errors.Is(err, ErrNotFound) {
		t.Errorf("an unknown id: %v", err)
	}
	recent, _ := s.Recent("qq:group:1", Window{Limit: 5})
	if len(recent) != 1 || !recent[0].IsRecalled() {
		t.Errorf("recent: %+v", recent)
	}
}
