package daemon

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/mainvirtual"
	"github.com/cyan-agent/cyan/persona"
	"github.com/cyan-agent/cyan/persona/lorebook"
	"github.com/cyan-agent/cyan/store"
)

func lorePersona(t *testing.T, book string) *persona.Persona {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "persona.md"), []byte("---\nname: Ember\nlorebook: book.json\n---\nI am ${agent_name}.\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "book.json"), []byte(book), 0o600)
	p, err := persona.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoreSource(t *testing.T) {
	st, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	good := `{"entries": [
	  {"keys": ["dragon"], "content": "Ignis sleeps.", "enabled": true, "extensions": {"probability": 50}},
	  {"keys": ["{{user}}"], "content": "{{user}} is known to {{char}}.", "enabled": true, "position": "before_char"}]}`
	var cur atomic.Pointer[persona.Persona]
	cur.Store(lorePersona(t, good))
	s, err := newLoreSource(cur.Load, st, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	rolls := []float64{0.4, 0.9}
	s.rand = func() float64 { r := rolls[0]; rolls = rolls[1:]; return r }
	now := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	st.Append(now, &store.Message{Channel: "c", Role: store.RoleUser, User: "alice", Text: "the dragon, alice here"})
	turn := func(id string) (before, after mainvirtual.Section) {
		q := mainvirtual.Query{Channel: "c", Speaker: "alice", MessageID: id, Now: now}
		count := func(s string) int { return len(s) / 4 }
		var err error
		if before, err = s.slot(lorebook.Before).Section(context.Background(), q, 100, count); err != nil {
			t.Fatal(err)
		}
		if after, err = s.slot(lorebook.After).Section(context.Background(), q, 100, count); err != nil {
			t.Fatal(err)
		}
		return before, after
	}
	before, after := turn("m1")
	if before.Body != "alice is known to Ember." || after.Body != "Ignis sleeps." {
		t.Fatalf("bodies %q / %q", before.Body, after.Body)
	}
	if len(after.Items) != 1 || !after.Items[0].Included || !strings.Contains(after.Items[0].Reason, "probability 50%, rolled 40.0") ||
		!strings.Contains(after.Note, "2 matched in the last 1 messages, 2 in the prompt") {
		t.Errorf("trace: %+v %q", after.Items, after.Note)
	}
	// One scan a turn: the two slots shared the first roll; the next turn rolls again.
	_, after = turn("m2")
	if after.Body != "" || after.Items[0].Included || !strings.Contains(after.Items[0].Reason, "left out: probability 50%, rolled 90.0") {
		t.Errorf("second turn: %q %+v", after.Body, after.Items)
	}

	// A reloaded persona with a broken lorebook keeps the last good one.
	cur.Store(lorePersona(t, `{"entries": [{"keys": [], "content": "x", "enabled": true}]}`))
	s.rand = func() float64 { return 0 }
	if _, after = turn("m3"); after.Body != "Ignis sleeps." {
		t.Errorf("after a broken reload: %q", after.Body)
	}
	// A persona without a lorebook fills nothing.
	cur.Store(lorePersona(t, `{"entries": []}`))
	if before, after = turn("m4"); before.Body != "" || after.Body != "" {
		t.Errorf("empty book: %q %q", before.Body, after.Body)
	}
}

func TestLoreSourceRefusesABrokenBookAtStart(t *testing.T) {
	p := lorePersona(t, `{"entries": [{"keys": [], "content": "x", "enabled": true, "comment": "Lost"}]}`)
	_, err := newLoreSource(func() *persona.Persona { return p }, nil, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "book.json: lorebook: entry 0 (Lost) has no keys") || !strings.Contains(err.Error(), "remove lorebook:") {
		t.Fatalf("err = %v", err)
	}
}
