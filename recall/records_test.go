package recall

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/journal"
	"github.com/cyan-agent/cyan/packets"

	"github.com/cyan-agent/cyan/internal/llmtest"
)

// fakeRecords is a record source in memory whose changes a test tells.
type fakeRecords struct {
	mu    sync.Mutex
	recs  []packets.Record
	reads int
}

func (f *fakeRecords) Records(context.Context) ([]packets.Record, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	return append([]packets.Record(nil), f.recs...), nil
}

func (f *fakeRecords) set(recs ...packets.Record) {
	f.mu.Lock()
	f.recs = recs
	f.mu.Unlock()
}

// theoryArticle is long enough to be cut into parts.
func theoryArticle() string {
	var lines []string
	for i := range 40 {
		lines = append(lines, fmt.Sprintf("Point %d: spaced repetition keeps what is reviewed at the edge of forgetting.", i+1))
	}
	lines[30] = "Point 31: the forgetting curve of Ebbinghaus falls fastest in the first hours."
	return strings.Join(lines, "\n")
}

func TestRecordsAreFoundBesideMessages(t *testing.T) {
	recs := &fakeRecords{}
	recs.set(
		packets.Record{Kind: packets.RecordEvent, ID: "ev-1", Channel: "home", Source: "event 20250530", Text: "nyalia and I walked under the cherry trees in the park", Time: t0.AddDate(0, 0, 30)},
		packets.Record{Kind: packets.RecordEvent, ID: "ev-2", Channel: "qq:group:42", Source: "event 20250311", Text: "bob found the exam schedule on the notice board", Time: t0.AddDate(0, 0, 10)},
		packets.Record{Kind: packets.RecordTheory, ID: "th-1", Source: "theory memory and review", Text: theoryArticle(), Time: t0.AddDate(0, 1, 0)},
		packets.Record{Kind: packets.RecordEvent, ID: "ev-3", Channel: "home", Source: "event 20250601", Text: "   ", Time: t0},
	)
	x, st := newTestIndex(t, Options{Records: recs, RecordsDelay: -1})
	fillHistory(t, st)
	syncIndex(t, x)
	ctx := context.Background()
	if s := x.Status(); s.Records != 4 {
		t.Fatalf("status records = %d", s.Records)
	}

	// An event of the channel is found, with its kind, id and source, among
	// the passages of the chat log.
	r, err := x.Search(ctx, Query{Prompt: "cherry trees park", Channel: "home"})
	if err != nil {
		t.Fatal(err)
	}
	var ev *Result
	kinds := map[string]int{}
	for i := range r.Results {
		kinds[r.Results[i].Kind]++
		if r.Results[i].ID == "ev-1" {
			ev = &r.Results[i]
		}
	}
	if ev == nil || ev.Kind != packets.RecordEvent || ev.Source != "event 20250530" || ev.Channel != "home" || ev.Location != "" ||
		!strings.Contains(ev.Text, "cherry trees") || kinds[KindMessages] == 0 {
		t.Fatalf("results %+v", r.Results)
	}
	// Another channel's events are not found; shared theories are, in
	// parts of whole lines with their place.
	r, _ = x.Search(ctx, Query{Prompt: "exam schedule notice board", Channel: "home"})
	for _, res := range r.Results {
		if res.ID == "ev-2" || res.Channel == "qq:group:42" {
			t.Fatalf("the group's record leaked into home: %+v", res)
		}
	}
	r, _ = x.Search(ctx, Query{Prompt: "Ebbinghaus forgetting curve", Channel: "qq:group:42"})
	if len(r.Results) == 0 || r.Results[0].Kind != packets.RecordTheory || r.Results[0].Source != "theory memory and review" ||
		!strings.HasPrefix(r.Results[0].Location, "line ") || !strings.Contains(r.Results[0].Text, "Ebbinghaus") || len(r.Results[0].Text) > 2*recordPart {
		t.Fatalf("theory hit: %+v", r.Results)
	}
	// Dates filter records like messages.
	r, _ = x.Search(ctx, Query{Prompt: "cherry trees park", Channel: "home", Until: t0.AddDate(0, 0, 29)})
	for _, res := range r.Results {
		if res.ID == "ev-1" {
			t.Fatal("a record after until was found")
		}
	}

	// Run follows the source: a change told on the journal is indexed.
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- x.Run(runCtx) }()
	recs.set(packets.Record{Kind: packets.RecordEvent, ID: "ev-9", Channel: "home", Source: "event 20250701", Text: "we planted tomatoes on the balcony", Time: t0.AddDate(0, 4, 0)})
	x.st.Journal().Post(journal.New(journal.RecordsChanged, "", nil))
	deadline := time.Now().Add(20 * time.Second)
	for {
		r, _ = x.Search(ctx, Query{Prompt: "tomatoes balcony", Channel: "home"})
		if len(r.Results) > 0 && r.Results[0].ID == "ev-9" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the changed records were not indexed: %+v", r.Results)
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestToolModeDoesNotShowARecordTwice(t *testing.T) {
	recs := &fakeRecords{}
	recs.set(packets.Record{Kind: packets.RecordTheory, ID: "th-1", Source: "theory memory and review", Text: theoryArticle(), Time: t0})
	fake, judge, _ := fakeJudge(t)
	x, _ := newTestIndex(t, Options{Records: recs, Judge: judge})
	syncIndex(t, x)
	fake.Enqueue(
		llmtest.Reply{Text: `{"keep": [], "give_up": false}`},
		llmtest.Reply{Text: `{"keep": [], "give_up": false}`},
	)
	r, err := x.Recall(context.Background(), Query{Prompt: "spaced repetition forgetting", MaxResults: 2, Channel: "home"}, ModeTool)
	if err != nil {
		t.Fatal(err)
	}
	calls := chats(fake)
	if len(calls) != 2 || r.Rounds != 2 {
		t.Fatalf("%d calls, %d rounds", len(calls), r.Rounds)
	}
	seen := map[string]bool{}
	for _, c := range calls {
		for _, line := range strings.Split(userText(c), "\n") {
			if strings.HasPrefix(line, "[") && strings.Contains(line, "theory memory and review, line") {
				place := line[strings.Index(line, "] ")+2:]
				if seen[place] {
					t.Fatalf("round 2 showed %q again", place)
				}
				seen[place] = true
			}
		}
	}
	if len(seen) < 3 {
		t.Fatalf("parts shown: %v", seen)
	}
}

func TestSplitRecord(t *testing.T) {
	short := packets.Record{Source: "event 1", Text: "one line"}
	if parts := splitRecord(&short); len(parts) != 1 || parts[0].loc != "" {
		t.Fatalf("short: %+v", parts)
	}
	long := packets.Record{Source: "theory t", Text: theoryArticle() + "\n" + strings.Repeat("y", 3*recordPart)}
	parts := splitRecord(&long)
	lines := 0
	for i, p := range parts {
		n := strings.Count(p.text, "\n") + 1
		lines += n
		if n > 1 && len(p.text) > recordPart {
			t.Fatalf("part %d of %d bytes over %d lines", i, len(p.text), n)
		}
		want := fmt.Sprintf("line %d", lines-n+1)
		if n > 1 {
			want += fmt.Sprintf(" ~ line %d", lines)
		}
		if p.loc != want {
			t.Fatalf("part %d at %q, want %q", i, p.loc, want)
		}
	}
	if lines != 41 {
		t.Fatalf("parts cover %d lines, want 41", lines)
	}
}

// modelLike is the built-in embedder under another name: recall treats it
// as a model embedder.
type modelLike struct{ HashEmbedder }

func (modelLike) ID() string { return "test:model-like" }

func TestAModelEmbedderFindsRecordsByMeaningAlone(t *testing.T) {
	recs := &fakeRecords{}
	recs.set(packets.Record{Kind: packets.RecordEvent, ID: "ev-1", Channel: "home", Source: "event 20250701", Text: "we planted tomatoes on the balcony", Time: t0})
	ctx := context.Background()
	for _, c := range []struct {
		emb  Embedder
		want bool
	}{{HashEmbedder{}, false}, {modelLike{}, true}} {
		x, _ := newTestIndex(t, Options{Records: recs, Embedder: c.emb})
		syncIndex(t, x)
		// "tomatoey" shares no term with the record's words, only
		// letters.
		r, err := x.Search(ctx, Query{Prompt: "tomatoey", Channel: "home"})
		if err != nil {
			t.Fatal(err)
		}
		found := len(r.Results) > 0 && r.Results[0].ID == "ev-1"
		if found != c.want {
			t.Errorf("%s: found %v, want %v (%+v)", c.emb.ID(), found, c.want, r.Results)
		}
	}
}
