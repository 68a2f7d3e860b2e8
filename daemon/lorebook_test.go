package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/config"
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
	s, err := newLoreSource(cur.Load, st, slog.New(slog.DiscardHandler), 0, 6000)
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
	cur.Store(lorePersona(t, `{"entries": [{"keys": ["a"], "content": 7, "enabled": true}]}`))
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
	p := lorePersona(t, `{"entries": [{"keys": ["a"], "content": 7, "enabled": true, "comment": "Lost"}]}`)
	_, err := newLoreSource(func() *persona.Persona { return p }, nil, slog.New(slog.DiscardHandler), 0, 6000)
	if err == nil || !strings.Contains(err.Error(), "book.json: lorebook: entry 0 (Lost): content: want text") || !strings.Contains(err.Error(), "remove lorebook:") {
		t.Fatalf("err = %v", err)
	}
}

// TestLoreRoom: a book gets its own token_budget, or SillyTavern's share of
// the context (25 %), not a fixed 800; constant entries are kept first; a
// SillyTavern World Info file as the persona's lorebook.json is read (it
// used to stop the daemon with a raw unmarshal error); a keyless entry
// does not refuse the book.
func TestLoreRoom(t *testing.T) {
	st, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	st.Append(now, &store.Message{Channel: "c", Role: store.RoleUser, User: "alice", Text: "k0 k1 k2 k3 k4 k5 k6 k7 k8 k9"})
	entry := func(i int, constant bool) string {
		return fmt.Sprintf(`{"keys": ["k%d"], "content": %q, "constant": %v, "insertion_order": %d}`, i, strings.Repeat(fmt.Sprintf("e%d ", i), 100), constant, 100-i)
	}
	book := func(budget string, constants int) string {
		var es []string
		for i := range 10 {
			es = append(es, entry(i, i >= 10-constants))
		}
		return `{` + budget + `"entries": [` + strings.Join(es, ",") + `]}`
	}
	count := func(s string) int { return len(s) / 4 } // 75 tokens an entry
	in := func(src, configured int, text string) (n int, kept []string, note string) {
		p := lorePersona(t, text)
		s, err := newLoreSource(func() *persona.Persona { return p }, st, slog.New(slog.DiscardHandler), configured, 6000)
		if err != nil {
			t.Fatal(err)
		}
		q := mainvirtual.Query{Channel: "c", Speaker: "alice", MessageID: "m" + fmt.Sprint(src), Now: now}
		sec, err := s.slot(lorebook.After).Section(context.Background(), q, loreSlotBudget(config.Agent{ContextBudget: 6000, Sections: config.Sections{Lorebook: configured}}), count)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range sec.Items {
			if it.Included {
				n++
				kept = append(kept, it.ID)
			}
		}
		return n, kept, sec.Note
	}
	if n, _, note := in(1, 0, book(`"token_budget": 800, `, 0)); n != 10 || !strings.Contains(note, "budget 800") {
		t.Errorf("token_budget 800 (10 entries of 75 tokens): %d in the prompt, %q", n, note)
	}
	if n, _, note := in(2, 0, book(`"token_budget": 160, `, 0)); n != 2 || !strings.Contains(note, "budget 160") {
		t.Errorf("token_budget 160: %d in the prompt, %q", n, note)
	}
	if n, _, note := in(3, 0, book(``, 0)); n != 10 || !strings.Contains(note, "budget 1500") {
		t.Errorf("no token_budget, 25%% of 6000: %d in the prompt, %q", n, note)
	}
	if n, _, note := in(4, 200, book(`"token_budget": 800, `, 0)); n != 2 || !strings.Contains(note, "budget 200") {
		t.Errorf("the owner's bound of 200: %d in the prompt, %q", n, note)
	}
	// Three constant entries with the lowest priority: kept before the rest.
	if n, kept, _ := in(5, 0, book(`"token_budget": 230, `, 3)); n != 3 || !slices.Equal(kept, []string{"entry 7", "entry 8", "entry 9"}) {
		t.Errorf("constant first: %d %v", n, kept)
	}
	// A World Info file, as SillyTavern keeps it, with a keyless entry.
	wi := `{"entries": {"0": {"uid": 0, "key": ["k1"], "keysecondary": [], "content": "from the world", "order": 100, "position": 1, "disable": false},
	  "1": {"uid": 1, "key": [], "content": "never fires", "constant": false, "disable": false}}}`
	if n, kept, _ := in(6, 0, wi); n != 1 || kept[0] != "entry 0" {
		t.Errorf("world info: %d %v", n, kept)
	}
}
