package mainvirtual

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/llm"
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
// persona, and show each matched entry in the trace; their room is
// SillyTavern's share of the window (of the context budget when no window
// is known); a broken book stops the start.
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
	sources := map[turn.Slot]turn.Source{}
	agent := config.Agent{ContextBudget: 6000}
	noWindow := func(context.Context) int { return 0 }
	room, err := addLoreSources(sources, func() *persona.Persona { return p }, st, slog.New(slog.DiscardHandler), agent, noWindow)
	if err != nil {
		t.Fatal(err)
	}
	if room(0) != 1500 || room(32768) != 8192 {
		t.Errorf("room: %d with no window, %d at 32768", room(0), room(32768))
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
	if _, err := addLoreSources(sources, func() *persona.Persona { return broken }, st, slog.New(slog.DiscardHandler), agent, noWindow); err == nil || !strings.Contains(err.Error(), "remove lorebook:") {
		t.Fatalf("a broken book: %v", err)
	}
}

// constantBook is a book of n constant entries of about 100 tokens each
// (at 4 bytes a token), numbered so a test can tell which were kept.
func constantBook(n int, tokenBudget int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"token_budget": %d, "entries": [`, tokenBudget)
	fmt.Fprintf(&b, `{"keys": ["dragon"], "content": "KEYED the dragon sleeps %s", "enabled": true, "order": 1000, "priority": 1000}`, strings.Repeat("lore ", 78))
	for i := range n {
		fmt.Fprintf(&b, `, {"keys": [], "constant": true, "content": "CONST%03d %s", "enabled": true, "order": %d}`, i, strings.Repeat("lore ", 78), i)
	}
	b.WriteString("]}")
	return b.String()
}

// The lorebook's share follows the model's window, as SillyTavern's
// world-info budget does (25 % of it): at 4096 tokens its constant entries
// are cut to the share, at 32768 all of them fit; constant entries come
// before a keyed entry of higher priority; and the trace's budget is the
// share.
func TestLoreShareFollowsTheWindow(t *testing.T) {
	for _, tc := range []struct {
		window, share, kept int // kept: the entries of the book
		keyed               bool
	}{{4096, 1024, 41, false}, {32768, 8192, 41, true}} {
		t.Run(fmt.Sprint(tc.window), func(t *testing.T) {
			p := lorePersona(t, constantBook(40, 0))
			fake := &llmtest.Server{Flavor: llmtest.Ollama, Window: tc.window, Models: []string{"qwen3:8b"}}
			r := newRigOn(t, fake, func(o *Options, c llm.Client) {
				o.Persona = func() *persona.Persona { return p }
				o.Window = func(context.Context) llm.Window { return llm.Window{Tokens: tc.window, Source: "test"} }
			})
			res := r.turn(t, "alice", "the dragon?")
			var sec *turn.SectionTrace
			for i, st := range res.Trace.Packet.Sections {
				if st.Slot == turn.SlotLoreAfter {
					sec = &res.Trace.Packet.Sections[i]
				}
			}
			if sec == nil || sec.Budget != tc.share {
				t.Fatalf("the lorebook's section: %+v", sec)
			}
			system := lastRequest(t, r.fake).Messages[0].Content
			checkFilled(t, *sec, strings.Count(system, "CONST")+strings.Count(system, "KEYED"), tc.kept)
			if strings.Contains(system, "KEYED") != tc.keyed {
				t.Errorf("the keyed entry in the prompt: %v, want %v (constant entries first)", !tc.keyed, tc.keyed)
			}
		})
	}
}

// A card's own token_budget is the lorebook's share whatever the window.
func TestLoreShareIsTheCardsTokenBudget(t *testing.T) {
	p := lorePersona(t, constantBook(40, 3000))
	fake := &llmtest.Server{Flavor: llmtest.Ollama, Window: 32768, Models: []string{"qwen3:8b"}}
	r := newRigOn(t, fake, func(o *Options, c llm.Client) {
		o.Persona = func() *persona.Persona { return p }
		o.Window = func(context.Context) llm.Window { return llm.Window{Tokens: 32768, Source: "test"} }
	})
	res := r.turn(t, "alice", "hello")
	for _, st := range res.Trace.Packet.Sections {
		if st.Slot == turn.SlotLoreAfter {
			if st.Budget != 3000 {
				t.Errorf("the lorebook's budget %d, want the card's token_budget 3000", st.Budget)
			}
			checkFilled(t, st, strings.Count(lastRequest(t, r.fake).Messages[0].Content, "CONST"), 41)
		}
	}
}

// checkFilled checks that the lorebook section's entries in the prompt
// fill its budget as far as whole entries go: the prompt holds inPrompt
// of them, all (want) when they fit, else as many as the budget holds,
// and the first entry left out would not have fitted.
func checkFilled(t *testing.T, st turn.SectionTrace, inPrompt, want int) {
	t.Helper()
	used, kept, firstOut := 0, 0, 0
	for _, it := range st.Items {
		if it.Included {
			used += it.Tokens
			kept++
		} else if firstOut == 0 {
			firstOut = it.Tokens
		}
	}
	if kept != inPrompt || used > st.Budget {
		t.Errorf("%d entries (%d tokens) kept of budget %d; %d in the prompt", kept, used, st.Budget, inPrompt)
	}
	if want > 0 && kept < want && firstOut <= st.Budget-used {
		t.Errorf("an entry of %d tokens was left out with %d of %d left", firstOut, st.Budget-used, st.Budget)
	}
	if kept > want {
		t.Errorf("%d entries kept, want at most %d", kept, want)
	}
}
