package store

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func openDir(t testing.TB, dir string) *Store {
	t.Helper()
	s, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestAppendRecentGet(t *testing.T) {
	s, err := Open(Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 10 {
		ch := "a"
		if i%2 == 1 {
			ch = "b"
		}
		// All in one millisecond: order must still follow the order of Append.
		if err := s.Append(t0, &Message{Channel: ch, Role: RoleUser, User: "u", Text: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Recent("a", Window{Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Text != "4" || got[1].Text != "6" || got[2].Text != "8" {
		t.Fatalf("Recent(a, 3) = %v", texts(got))
	}
	all, _ := s.Recent("a", Window{Limit: 100})
	if len(all) != 5 {
		t.Fatalf("Recent(a, 100) returned %d, want 5", len(all))
	}
	evens, _ := s.Recent("b", Window{Limit: 100, Keep: func(m *Message) bool { return m.Text != "5" }})
	if len(evens) != 4 {
		t.Fatalf("filter: %v", texts(evens))
	}
	m, err := s.Get(got[1].ID)
	if err != nil || m.Text != "6" || m.Channel != "a" {
		t.Fatalf("Get = %+v, %v", m, err)
	}
	if _, err := s.Get(uuid.NewString()); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get(unknown) err = %v, want ErrNotFound", err)
	}
	if _, err := s.Get("nope"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Get(bad) err = %v, want ErrInvalid", err)
	}
	scanned, _ := s.Recent("a", Window{Limit: 100, MaxScan: 2})
	if len(scanned) != 2 || scanned[1].Text != "8" {
		t.Fatalf("MaxScan: %v", texts(scanned))
	}
	chs, _ := s.Channels()
	if len(chs) != 2 || chs[0].Name != "a" || chs[1].Name != "b" {
		t.Fatalf("Channels = %+v", chs)
	}
}

// TestGetRefsReadsInOrder: GetRefs returns each named message in the
// order asked, nil for one not stored or named with another channel, read
// whole and split between the cores.
func TestGetRefsReadsInOrder(t *testing.T) {
	s, err := Open(Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var refs []Ref
	for i := range 8 {
		m := &Message{Channel: fmt.Sprint("c", i%3), Role: RoleUser, User: "u", Text: fmt.Sprint(i)}
		if err := s.Append(t0, m); err != nil {
			t.Fatal(err)
		}
		refs = append(refs, Ref{Channel: m.Channel, ID: uuid.MustParse(m.ID)})
	}
	// Backwards, with a message of another channel's name and one never
	// stored in the middle.
	slices.Reverse(refs)
	refs = slices.Insert(refs, 4, Ref{Channel: "c0", ID: refs[0].ID}, Ref{Channel: "c1", ID: uuid.New()})
	want := []string{"7", "6", "5", "4", "-", "-", "3", "2", "1", "0"}
	for _, n := range []int{len(refs), 2 * getRefsSplit, 2*getRefsSplit - 1, 1} {
		got, err := s.GetRefs(refs[:n])
		if err != nil || len(got) != n {
			t.Fatalf("%d refs: %d messages, %v", n, len(got), err)
		}
		for i, m := range got {
			text := "-"
			if m != nil {
				text = m.Text
			}
			if text != want[i] {
				t.Fatalf("%d refs: message %d is %q, want %q", n, i, text, want[i])
			}
		}
	}
	if got, err := s.GetRefs(nil); err != nil || len(got) != 0 {
		t.Fatalf("no refs: %v, %v", got, err)
	}
}

func TestIDsMonotonic(t *testing.T) {
	var g idGen
	prev := g.next(t0)
	times := []time.Time{t0, t0, t0.Add(-time.Hour), t0.Add(time.Millisecond), t0}
	for i, tm := range times {
		id := g.next(tm)
		if id.Version() != 7 || id.Variant() != uuid.RFC4122 {
			t.Fatalf("id %d: version %d variant %v", i, id.Version(), id.Variant())
		}
		if string(id[:]) <= string(prev[:]) {
			t.Fatalf("id %d (%s) does not sort after %s", i, id, prev)
		}
		prev = id
	}
	if ms := idMillis(g.next(t0.Add(time.Hour))); ms != t0.Add(time.Hour).UnixMilli() {
		t.Errorf("id time = %d, want %d", ms, t0.Add(time.Hour).UnixMilli())
	}
	// Counter overflow within one millisecond borrows the next one, still ordered.
	g2 := idGen{}
	prev = g2.next(t0)
	for range 5000 {
		id := g2.next(t0)
		if string(id[:]) <= string(prev[:]) {
			t.Fatal("overflow broke ordering")
		}
		prev = id
	}
}

func TestPersistAndSeed(t *testing.T) {
	dir := t.TempDir()
	s := openDir(t, dir)
	late := t0.Add(24 * time.Hour)
	if err := s.Append(late, &Message{Channel: "c", Role: RoleUser, Text: "later"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openDir(t, dir)
	defer s.Close()
	// The clock is now a day behind the stored message: the new one must still sort after it.
	if err := s.Append(t0, &Message{Channel: "c", Role: RoleAssistant, Text: "earlier clock"}); err != nil {
		t.Fatal(err)
	}
	got, _ := s.Recent("c", Window{Limit: 10})
	if len(got) != 2 || got[0].Text != "later" || got[1].Text != "earlier clock" {
		t.Fatalf("after reopen: %v", texts(got))
	}
}

func TestSecondOpenLocked(t *testing.T) {
	dir := t.TempDir()
	s := openDir(t, dir)
	_, err := Open(Options{Dir: dir})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open err = %v, want ErrLocked", err)
	}
	if pid, held, err := Holder(dir); err != nil || !held || pid == 0 {
		t.Fatalf("Holder = %d %v %v", pid, held, err)
	}
	s.Close()
	if _, held, _ := Holder(dir); held {
		t.Fatal("Holder reports held after Close")
	}
	s = openDir(t, dir)
	s.Close()
}

func TestTrace(t *testing.T) {
	s, _ := Open(Options{InMemory: true})
	defer s.Close()
	if _, err := s.Trace("x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("err = %v", err)
	}
	if err := s.PutTrace("x", []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	if b, err := s.Trace("x"); err != nil || string(b) != `{"a":1}` {
		t.Fatalf("Trace = %s, %v", b, err)
	}
}

func TestValidChannel(t *testing.T) {
	tests := []struct {
		name string
		in   string
		ok   bool
	}{
		{"plain", "home", true},
		{"platform style", "qq:group:12345", true},
		{"unicode", "青蓝的家", true},
		{"empty", "", false},
		{"nul", "a\x00b", false},
		{"newline", "a\nb", false},
		{"too long", string(make([]byte, 201)), false},
		{"bad utf8", "\xff", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidChannel(tt.in)
			if (err == nil) != tt.ok {
				t.Fatalf("ValidChannel(%q) = %v", tt.in, err)
			}
			if err != nil && !errors.Is(err, ErrInvalid) {
				t.Fatalf("error does not wrap ErrInvalid: %v", err)
			}
		})
	}
}

func texts(ms []*Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Text)
	}
	return out
}

func TestHistoryScanSince(t *testing.T) {
	s, err := Open(Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// A live message now, then history from a week ago: history sorts first.
	if err := s.Append(t0, &Message{Channel: "c", Role: RoleUser, Text: "live"}); err != nil {
		t.Fatal(err)
	}
	old := t0.Add(-7 * 24 * time.Hour)
	hist := []*Message{
		{Channel: "c", Role: RoleUser, Text: "h1", Time: old},
		{Channel: "c", Role: RoleUser, Text: "h2", Time: old}, // same ms: keeps batch order
		{Channel: "c", Role: RoleUser, Text: "h3", Time: old.Add(time.Hour)},
	}
	if err := s.AppendHistory(hist...); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendHistory(&Message{Channel: "c", Text: "no time"}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("history without time: %v", err)
	}
	var seen []string
	err = s.Scan("c", "", func(m *Message) (bool, error) { seen = append(seen, m.Text); return true, nil })
	if err != nil || fmt.Sprint(seen) != "[h1 h2 h3 live]" {
		t.Fatalf("Scan all = %v, %v", seen, err)
	}
	seen = nil
	_ = s.Scan("c", hist[1].ID, func(m *Message) (bool, error) { seen = append(seen, m.Text); return len(seen) < 1, nil })
	if fmt.Sprint(seen) != "[h3]" {
		t.Fatalf("Scan after h2, stop after one = %v", seen)
	}
	seen = nil
	_ = s.Scan("c", IDAt(old.Add(time.Minute)), func(m *Message) (bool, error) { seen = append(seen, m.Text); return true, nil })
	if fmt.Sprint(seen) != "[h3 live]" {
		t.Fatalf("Scan from a time = %v", seen)
	}
	got, err := s.Recent("c", Window{Limit: 10, Since: hist[1].ID})
	if err != nil || fmt.Sprint(texts(got)) != "[h2 h3 live]" {
		t.Fatalf("Recent since h2 = %v, %v", texts(got), err)
	}
	if _, err := s.Recent("c", Window{Limit: 1, Since: "x"}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("bad Since: %v", err)
	}
}
func TestCompressedForms(t *testing.T) {
	s, err := Open(Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := &Message{Channel: "c", Role: RoleAssistant, Text: "a long answer"}
	if err := s.Append(now, m); err != nil {
		t.Fatal(err)
	}
	other := s.NewID(now)
	if other <= m.ID {
		t.Errorf("NewID %s must sort after the message id %s", other, m.ID)
	}
	if err := s.PutCompressed(m.ID, Compressed{Text: "short", Time: now, TraceID: other}); err != nil {
		t.Fatal(err)
	}
	got, err := s.CompressedOf(m.ID, other, "not-an-id")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[m.ID].Text != "short" || got[m.ID].TraceID != other {
		t.Errorf("CompressedOf = %+v", got)
	}
	if err := s.PutCompressed("x", Compressed{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("bad id: %v", err)
	}
}

func TestRecentTools(t *testing.T) {
	s, _ := Open(Options{InMemory: true})
	defer s.Close()
	for i := range 30 {
		role := RoleUser
		if i%7 == 0 {
			role = RoleTool
		}
		s.Append(t0, &Message{Channel: "c", Role: role, Text: fmt.Sprint(i)})
	}
	s.Append(t0, &Message{Channel: "other", Role: RoleTool, Text: "elsewhere"})
	got, err := s.RecentTools("c", 3)
	if err != nil || fmt.Sprint(texts(got)) != "[14 21 28]" {
		t.Fatalf("RecentTools = %v, %v", texts(got), err)
	}
}

// TestConversational is the one rule of what counts as conversation, for
// main-virtual's context and the event log's topics alike.
func TestConversational(t *testing.T) {
	tests := []struct {
		name string
		m    Message
		want bool
	}{
		{"a user line", Message{Role: RoleUser, Text: "hi"}, true},
		{"a platform line", Message{Role: RoleSystem, Text: "x joined"}, true},
		{"the agent's answer", Message{Role: RoleAssistant, Text: "hello"}, true},
		{"the agent's silence", Message{Role: RoleAssistant, Empty: true}, true},
		{"a bare tool-call record", Message{Role: RoleAssistant}, false},
		{"a tool result", Message{Role: RoleTool, Text: "42"}, false},
		{"a recalled line", Message{Role: RoleUser, Text: "oops", Recalled: time.Unix(1, 0)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.m.Conversational(); got != tt.want {
				t.Errorf("Conversational() = %v, want %v", got, tt.want)
			}
		})
	}
}
