package lorebook

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// owner is a persona with the lorebook book (a distinct one each call, as
// a reload makes).
func owner(book string) Owner {
	key := new(int)
	return Owner{Key: key, Data: []byte(book), File: "book.json", Dir: "p", Char: "Ember"}
}

func TestSourceFillsBothSlotsFromOneScan(t *testing.T) {
	good := `{"entries": [
	  {"keys": ["dragon"], "content": "Ignis sleeps.", "enabled": true, "extensions": {"probability": 50}},
	  {"keys": ["{{user}}"], "content": "{{user}} is known to {{char}}.", "enabled": true, "position": "before_char"}]}`
	cur := owner(good)
	s, err := NewSource(SourceOptions{Owner: cur, Context: 6000})
	if err != nil {
		t.Fatal(err)
	}
	rolls := []float64{0.4, 0.9}
	s.rand = func() float64 { r := rolls[0]; rolls = rolls[1:]; return r }
	recent := func(n int) ([]string, error) { return []string{"alice: the dragon, alice here"}, nil }
	turn := func(id string) (before, after Slot) {
		tu := Turn{Owner: cur, Channel: "c", ID: id, User: "alice", Budget: 100, Count: func(s string) int { return len(s) / 4 }, Recent: recent}
		var err error
		if before, err = s.Fill(Before, tu); err != nil {
			t.Fatal(err)
		}
		if after, err = s.Fill(After, tu); err != nil {
			t.Fatal(err)
		}
		return before, after
	}
	before, after := turn("m1")
	if before.Body != "alice is known to Ember." || after.Body != "Ignis sleeps." {
		t.Fatalf("bodies %q / %q", before.Body, after.Body)
	}
	if len(after.Matched) != 1 || !after.Matched[0].Included || !strings.Contains(after.Matched[0].Reason(), "probability 50%, rolled 40.0") ||
		!strings.Contains(after.Note, "2 matched in the last 1 messages, 2 in the prompt") {
		t.Errorf("trace: %+v %q", after.Matched, after.Note)
	}
	// One scan a turn: the two slots shared the first roll; the next turn rolls again.
	_, after = turn("m2")
	if after.Body != "" || after.Matched[0].Included || !strings.Contains(after.Matched[0].Reason(), "left out: probability 50%, rolled 90.0") {
		t.Errorf("second turn: %q %+v", after.Body, after.Matched)
	}

	// A reloaded persona with a broken lorebook keeps the last good one.
	cur = owner(`{"entries": [{"keys": ["a"], "content": 7, "enabled": true}]}`)
	s.rand = func() float64 { return 0 }
	if _, after = turn("m3"); after.Body != "Ignis sleeps." {
		t.Errorf("after a broken reload: %q", after.Body)
	}
	// A persona without a lorebook fills nothing.
	cur = owner(`{"entries": []}`)
	if before, after = turn("m4"); before.Body != "" || after.Body != "" {
		t.Errorf("empty book: %q %q", before.Body, after.Body)
	}
	cur = Owner{Key: new(int)}
	if before, after = turn("m5"); before.Body != "" || after.Body != "" || after.Note != "" {
		t.Errorf("no book: %q %q %q", before.Body, after.Body, after.Note)
	}
}

func TestSourceRefusesABrokenBookAtStart(t *testing.T) {
	_, err := NewSource(SourceOptions{Owner: owner(`{"entries": [{"keys": ["a"], "content": 7, "enabled": true, "comment": "Lost"}]}`), Context: 6000})
	if err == nil || !strings.Contains(err.Error(), "book.json: lorebook: entry 0 (Lost): content: want text") || !strings.Contains(err.Error(), "remove lorebook:") {
		t.Fatalf("err = %v", err)
	}
}

// TestSourceRoom: a book gets its own token_budget, or SillyTavern's share
// of the context (25 %), not a fixed 800; constant entries are kept first;
// a SillyTavern World Info file as the persona's lorebook.json is read (it
// used to stop the daemon with a raw unmarshal error); a keyless entry
// does not refuse the book.
func TestSourceRoom(t *testing.T) {
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
	recent := func(int) ([]string, error) { return []string{"alice: k0 k1 k2 k3 k4 k5 k6 k7 k8 k9"}, nil }
	in := func(configured int, text string) (n int, kept []string, note string) {
		o := owner(text)
		s, err := NewSource(SourceOptions{Owner: o, Configured: configured, Context: 6000})
		if err != nil {
			t.Fatal(err)
		}
		sl, err := s.Fill(After, Turn{Owner: o, Channel: "c", ID: "m", User: "alice", Budget: cmp.Or(configured, 6000), Count: count, Recent: recent})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range sl.Matched {
			if f.Included {
				n++
				kept = append(kept, f.Entry.Label())
			}
		}
		return n, kept, sl.Note
	}
	if n, _, note := in(0, book(`"token_budget": 800, `, 0)); n != 10 || !strings.Contains(note, "budget 800") {
		t.Errorf("token_budget 800 (10 entries of 75 tokens): %d in the prompt, %q", n, note)
	}
	if n, _, note := in(0, book(`"token_budget": 160, `, 0)); n != 2 || !strings.Contains(note, "budget 160") {
		t.Errorf("token_budget 160: %d in the prompt, %q", n, note)
	}
	if n, _, note := in(0, book(``, 0)); n != 10 || !strings.Contains(note, "budget 1500") {
		t.Errorf("no token_budget, 25%% of 6000: %d in the prompt, %q", n, note)
	}
	if n, _, note := in(200, book(`"token_budget": 800, `, 0)); n != 2 || !strings.Contains(note, "budget 200") {
		t.Errorf("the owner's bound of 200: %d in the prompt, %q", n, note)
	}
	// Three constant entries with the lowest priority: kept before the rest.
	if n, kept, _ := in(0, book(`"token_budget": 230, `, 3)); n != 3 || !slices.Equal(kept, []string{"entry 7", "entry 8", "entry 9"}) {
		t.Errorf("constant first: %d %v", n, kept)
	}
	// A World Info file, as SillyTavern keeps it, with a keyless entry.
	wi := `{"entries": {"0": {"uid": 0, "key": ["k1"], "keysecondary": [], "content": "from the world", "order": 100, "position": 1, "disable": false},
	  "1": {"uid": 1, "key": [], "content": "never fires", "constant": false, "disable": false}}}`
	if n, kept, _ := in(0, wi); n != 1 || kept[0] != "entry 0" {
		t.Errorf("world info: %d %v", n, kept)
	}
}

// TestSourceRoomFollowsTheWindow: a book without a token_budget gets a
// quarter of the model's window a turn states (of agent.context_budget
// when it states none), its constant entries first; a book's own
// token_budget holds at any window; a persona without a book gets none.
func TestSourceRoomFollowsTheWindow(t *testing.T) {
	var es []string
	for i := range 40 {
		es = append(es, fmt.Sprintf(`{"keys": ["k%d"], "content": %q, "constant": %v, "insertion_order": %d}`, i, strings.Repeat(fmt.Sprintf("e%02d ", i), 75), i >= 20, 100-i))
	}
	count := func(s string) int { return len(s) / 4 } // 75 tokens an entry
	recent := func(int) ([]string, error) { return []string{"alice: k0 k1 k2 k3 k4 k5 k6 k7 k8 k9"}, nil }
	for _, tc := range []struct {
		budget            string
		window, room, inN int
		firstKeyed        bool
	}{
		{``, 0, 1500, 20, false},    // 25 % of agent.context_budget 6000
		{``, 4096, 1024, 13, false}, // 13 of the 20 constant entries
		{``, 32768, 8192, 30, true}, // all 20 constant, 10 keyed
		{`"token_budget": 300, `, 32768, 300, 4, false},
	} {
		o := owner(`{` + tc.budget + `"entries": [` + strings.Join(es, ",") + `]}`)
		s, err := NewSource(SourceOptions{Owner: o, Context: 6000})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Room(o, tc.window); got != tc.room {
			t.Errorf("%swindow %d: room %d, want %d", tc.budget, tc.window, got, tc.room)
		}
		sl, err := s.Fill(After, Turn{Owner: o, Channel: "c", ID: "m", User: "alice", Budget: 1 << 20, Window: tc.window, Count: count, Recent: recent})
		if err != nil {
			t.Fatal(err)
		}
		n, keyed := 0, false
		for _, f := range sl.Matched {
			if f.Included {
				n++
				keyed = keyed || !f.Entry.Constant
			}
		}
		if n != tc.inN || keyed != tc.firstKeyed || !strings.Contains(sl.Note, fmt.Sprintf("budget %d)", tc.room)) {
			t.Errorf("%swindow %d: %d entries in the prompt (keyed among them: %v), want %d (%v); %s", tc.budget, tc.window, n, keyed, tc.inN, tc.firstKeyed, sl.Note)
		}
	}
	none := Owner{Key: new(int)}
	s, err := NewSource(SourceOptions{Owner: none, Context: 6000})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Room(none, 32768); got != 0 {
		t.Errorf("no book: room %d", got)
	}
}
