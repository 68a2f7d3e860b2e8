package events

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/recall"
	"github.com/cyan-agent/cyan/turn"
)

// logRecords is the log as recall's record source, as the daemon wires it.
type logRecords struct{ l *Log }

func (r logRecords) Records(context.Context) ([]packets.Record, error) {
	ths, err := r.l.Theories()
	var out []packets.Record
	for _, th := range ths {
		s := th.ScopeOf()
		out = append(out, packets.Record{Kind: packets.RecordTheory, ID: th.ID, Channel: s.Channel, OwnerOnly: s.Owner,
			Source: "theory " + th.Title, Text: th.Article, Time: th.Updated})
	}
	return out, err
}

// withTheories matches topics against the log's theories through a real
// recall index.
func (f *fixture) withTheories(t testing.TB) *recall.Index {
	t.Helper()
	x, err := recall.New(recall.Options{Store: f.st, Records: logRecords{f.log}, RecordsDelay: -1})
	if err != nil {
		t.Fatal(err)
	}
	f.log.theories = func(ctx context.Context, q TheoryQuery) ([]TheoryMatch, error) {
		ms, err := x.MatchRecords(ctx, recall.MatchQuery{Text: q.Text, Kind: packets.RecordTheory, Channel: q.Channel, Owner: q.Owner, Limit: q.Limit})
		var out []TheoryMatch
		for _, m := range ms {
			out = append(out, TheoryMatch{ID: m.ID, Score: m.Score, Shared: m.Shared})
		}
		return out, err
	}
	return x
}

func TestTheoriesComeToTheTopic(t *testing.T) {
	ctx := context.Background()
	t0 := day(2026, 6, 3, 20, 0)
	f := newFixture(t, t0, testConfig())
	x := f.withTheories(t)
	if _, err := f.log.CreateTheory("zebra migration", "zebras walk north in june, following the rain\nthe herds return south in october\nthird line", nil,
		packets.Scope{Channel: "home", Owner: true}, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := f.log.CreateTheory("our mascot", "the group's mascot is a zebra called stripes", nil, packets.Scope{Channel: "qq:group:1"}, t0); err != nil {
		t.Fatal(err)
	}
	if err := x.SyncRecords(ctx); err != nil {
		t.Fatal(err)
	}
	f.say(t, "home", "hareru", "an old message about dinner", t0.Add(-3*time.Hour))
	f.say(t, "home", "hareru", "the zebras walk north again", t0)
	f.say(t, "home", "青蓝", "right on time for the rain", t0.Add(time.Minute))
	f.say(t, "qq:group:1", "mallory", "do zebras walk north when the rain comes?", t0)
	now := t0.Add(2 * time.Minute)

	theories := func(q SectionQuery, budget int) turn.Section {
		t.Helper()
		q.Now = now
		sec, err := f.log.TopicTheories(ctx, q, budget, words)
		if err != nil {
			t.Fatal(err)
		}
		return sec
	}
	// The owner's topic: the theory's reference and first lines, and why.
	sec := theories(SectionQuery{Channel: "home", Reader: ownerReader("home")}, 400)
	want := "%[theory zebra migration] - zebras walk north in june, following the rain / the herds return south in october"
	if sec.Body != want {
		t.Fatalf("owner's topic brought:\n%s\nwant:\n%s", sec.Body, want)
	}
	if len(sec.Items) != 1 || !sec.Items[0].Included || !strings.Contains(sec.Items[0].Reason, "the topic's talk touches it") ||
		!strings.Contains(sec.Items[0].Reason, "zebra") || !strings.Contains(sec.Items[0].Reason, "north") {
		t.Fatalf("trace items %+v", sec.Items)
	}
	if !strings.Contains(sec.Note, "matched on its last 2 messages") {
		t.Fatalf("note %q: the topic is the two messages since the silence", sec.Note)
	}
	// A stranger in a group asks the same: the owner's theory is neither
	// shown nor named in the trace.
	stranger := packets.Reader{Channel: "qq:group:1", Perm: &packets.Permission{Infos: []string{"*:own", "*:public"}}}
	sec = theories(SectionQuery{Channel: "qq:group:1", Reader: stranger}, 400)
	if strings.Contains(sec.Body, "zebra migration") || strings.Contains(sec.Body, "june") {
		t.Fatalf("a stranger's topic brought the owner's theory:\n%s", sec.Body)
	}
	for _, it := range sec.Items {
		if strings.Contains(it.ID, "zebra") {
			t.Fatalf("trace names the owner's theory: %+v", it)
		}
	}
	// The owner under a permission without theories gets none either.
	narrow := ownerReader("home")
	narrow.Perm = &packets.Permission{Infos: []string{"history:own"}}
	if sec := theories(SectionQuery{Channel: "home", Reader: narrow}, 400); sec.Body != "" {
		t.Fatalf("a reader without theories in its infos got:\n%s", sec.Body)
	}
	// Over the budget: traced, not shown.
	sec = theories(SectionQuery{Channel: "home", Reader: ownerReader("home")}, 20)
	if sec.Body != "" || len(sec.Items) != 1 || sec.Items[0].Included || !strings.Contains(sec.Items[0].Reason, "over the theories' budget (10 tokens)") {
		t.Fatalf("over budget: %q %+v", sec.Body, sec.Items)
	}
	// After the silence the topic is over: nothing comes.
	if sec, err := f.log.TopicTheories(ctx, SectionQuery{Channel: "home", Reader: ownerReader("home"), Now: t0.Add(2 * time.Hour)}, 400, words); err != nil || sec.Body != "" {
		t.Fatalf("a topic that ended brought %q %v", sec.Body, err)
	}
	// events.theories_budget 0 brings none.
	f.log.cfg.TheoriesBudget = 0
	if sec := theories(SectionQuery{Channel: "home", Reader: ownerReader("home")}, 400); sec.Body != "" || sec.Items != nil {
		t.Fatalf("theories_budget 0 brought %q %+v", sec.Body, sec.Items)
	}
}

func TestTheoryLeadOf(t *testing.T) {
	for _, tc := range []struct {
		name, article, want string
	}{
		{"two lines", "first line\n\n  second   line \nthird", "first line / second line"},
		{"one line", "only", "only"},
		{"long", strings.Repeat("x", 300), strings.Repeat("x", theoryLead-1) + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := theoryLeadOf(tc.article); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestTheoryWithAnAwkwardTitleIsReferencedByID(t *testing.T) {
	ctx := context.Background()
	t0 := day(2026, 6, 3, 20, 0)
	f := newFixture(t, t0, testConfig())
	x := f.withTheories(t)
	th, err := f.log.CreateTheory("zebras [north]", "zebras walk north in june, following the rain", nil, packets.Scope{Channel: "home", Owner: true}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.SyncRecords(ctx); err != nil {
		t.Fatal(err)
	}
	f.say(t, "home", "hareru", "the zebras walk north again", t0)
	sec, err := f.log.TopicTheories(ctx, SectionQuery{Channel: "home", Reader: ownerReader("home"), Now: t0}, 400, words)
	want := "%[theory " + th.ID + "] zebras [north] - zebras walk north in june, following the rain"
	if err != nil || sec.Body != want {
		t.Fatalf("got %q %v, want %q", sec.Body, err, want)
	}
	if out, err := f.log.Open(ctx, ownerReader("home"), RefTheory+th.ID, ""); err != nil || !strings.Contains(out, "zebras walk north") {
		t.Fatalf("its reference opens to %q %v", out, err)
	}
}

// open honours a theory's line range: "Line 2 ~ Line 2" is the article's
// second line, not the whole article; a range past the end or backwards
// is an error that says how to write one.
func TestTheoryOpensByLineRange(t *testing.T) {
	ctx := context.Background()
	t0 := day(2026, 6, 3, 20, 0)
	f := newFixture(t, t0, testConfig())
	th, err := f.log.CreateTheory("sleep", "sleep is a rhythm\nlight sets the clock\nnaps under 20 minutes help", nil, packets.Scope{Channel: "home", Owner: true}, t0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ location, want, not, err string }{
		{"", "light sets the clock", "", ""},
		{"Line 2 ~ Line 2", "light sets the clock", "sleep is a rhythm", ""},
		{"line 2 ~ line 3", "naps under 20 minutes", "sleep is a rhythm", ""},
		{"Line 3 ~ Line 9", "Line 3 ~ Line 3 of 3", "light sets", ""},
		{"Line 4 ~ Line 5", "", "", "the article has 3 lines"},
		{"Line 3 ~ Line 2", "", "", "is empty"},
		{"page 2", "", "", `opens whole or by "Line n ~ Line m"`},
	} {
		out, err := f.log.Open(ctx, ownerReader("home"), RefTheory+th.ID, tc.location)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %q %v, want the error %q", tc.location, out, err, tc.err)
			}
			continue
		}
		if err != nil || !strings.Contains(out, tc.want) || tc.not != "" && strings.Contains(out, tc.not) {
			t.Errorf("%q: %q %v", tc.location, out, err)
		}
	}
}
