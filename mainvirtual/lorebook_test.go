package mainvirtual

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/persona"
	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/turn"
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

// TestLoreSlotsAreWired: the two lorebook slots scan the channel's stored
// conversation (not the system's lines), name the speaker and the
// persona, and show each matched entry in the trace; their bound is the
// context budget; a broken book stops the start.
func TestLoreSlotsAreWired(t *testing.T) {
	st, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p := lorePersona(t, `{"entries": [
	  {"keys": ["dragon"], "content": "Ignis sleeps.", "enabled": true},
	  {"keys": ["secret"], "content": "never", "enabled": true},
	  {"keys": ["{{user}}"], "content": "{{user}} is known to {{char}}.", "enabled": true, "position": "before_char"}]}`)
	now := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	st.Append(now, &store.Message{Channel: "c", Role: store.RoleSystem, User: "system", Text: "the secret"})
	st.Append(now, &store.Message{Channel: "c", Role: store.RoleUser, User: "alice", Text: "the dragon, alice here"})
	sources, budgets := map[turn.Slot]turn.Source{}, map[turn.Slot]int{}
	agent := config.Agent{ContextBudget: 6000}
	if err := addLoreSources(sources, budgets, func() *persona.Persona { return p }, st, slog.New(slog.DiscardHandler), agent); err != nil {
		t.Fatal(err)
	}
	if budgets[turn.SlotLoreBefore] != 6000 || budgets[turn.SlotLoreAfter] != 6000 {
		t.Errorf("budgets %v", budgets)
	}
	q := turn.Query{Channel: "c", Speaker: "alice", MessageID: "m1", Now: now}
	count := func(s string) int { return len(s) / 4 }
	before, err := sources[turn.SlotLoreBefore].Section(context.Background(), q, 100, count)
	if err != nil {
		t.Fatal(err)
	}
	after, err := sources[turn.SlotLoreAfter].Section(context.Background(), q, 100, count)
	if err != nil {
		t.Fatal(err)
	}
	if before.Body != "alice is known to Ember." || after.Body != "Ignis sleeps." {
		t.Fatalf("bodies %q / %q", before.Body, after.Body)
	}
	if len(after.Items) != 1 || after.Items[0].ID != "entry 0" || !after.Items[0].Included || !strings.Contains(after.Note, "2 matched") {
		t.Errorf("trace: %+v %q", after.Items, after.Note)
	}

	broken := lorePersona(t, `{"entries": [{"keys": ["a"], "content": 7, "enabled": true, "comment": "Lost"}]}`)
	if err := addLoreSources(sources, budgets, func() *persona.Persona { return broken }, st, slog.New(slog.DiscardHandler), agent); err == nil || !strings.Contains(err.Error(), "remove lorebook:") {
		t.Fatalf("a broken book: %v", err)
	}
}
