package recall

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/store"
)

var t0 = time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)

// history is a small multilingual conversation in two channels.
var history = []struct {
	ch, user, text string
	day            int
}{
	{"home", "nyalia", "I still don't understand why other people's grades are so high", 0},
	{"home", "cyan", "Competing with others shouldn't be the goal; we don't hate anyone", 0},
	{"home", "nyalia", "okay, thank you", 0},
	{"home", "nyalia", "the weather is lovely, let's go to the park", 30},
	{"home", "cyan", "I'd love a walk under the cherry trees", 30},
	{"home", "nyalia", "我不理解啊，这么多知识点怎么组织起来的？", 200},
	{"home", "cyan", "高数其实是存在着学习的大方向的，比如微积分方面就是把一个系统的理论拆为了定积分，不定积分", 200},
	{"home", "nyalia", "明日は数学の試験があるので緊張しています", 300},
	{"home", "cyan", "大丈夫、一緒に復習しよう", 300},
	{"qq:group:42", "bob", "did anyone see the exam schedule for next week?", 10},
	{"qq:group:42", "alice", "the exam schedule is posted on the notice board", 10},
	{"qq:group:42", "bob", "thanks alice, I'll check the board after lunch", 11},
}

// newTestIndex makes an index over o.Store (a new in-memory one when nil)
// with HashEmbedder when o names no embedder: its vectors cover Chinese
// and Japanese too, and the tests here are about the index, not about
// meaning (glove_test.go and TestTheDefaultEmbedderIsGloVe are). The
// tests run the hybrid path: HashEmbedder's vectors, off by default, get
// weight 0.1 unless o says otherwise (hybridOff keeps them off); another
// embedder keeps its default.
func newTestIndex(t *testing.T, o Options) (*Index, *store.Store) {
	t.Helper()
	if o.Embedder == nil {
		o.Embedder = HashEmbedder{}
	}
	switch {
	case o.VectorWeight == hybridOff:
		o.VectorWeight = 0
	case o.VectorWeight == 0 && (o.Embedder == nil || isBuiltin(o.Embedder)):
		o.VectorWeight = 0.1
	}
	st := o.Store
	if st == nil {
		var err error
		st, err = store.Open(store.Options{InMemory: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		o.Store = st
	}
	x, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return x, st
}

// hybridOff asks newTestIndex for the default vector weight.
const hybridOff = -1

func TestBuiltinVectorsAreOffByDefault(t *testing.T) {
	x, st := newTestIndex(t, Options{VectorWeight: hybridOff})
	fillHistory(t, st)
	syncIndex(t, x)
	r, err := x.Search(context.Background(), Query{Prompt: "exam schedule"})
	if err != nil || len(r.Results) == 0 {
		t.Fatalf("%+v %v", r, err)
	}
	if !r.Lexical || r.Vector || r.Note != "" {
		t.Errorf("lexical %v vector %v note %q: want words alone, and no note about vectors", r.Lexical, r.Vector, r.Note)
	}
	if !strings.Contains(r.Results[0].Text, "exam schedule") {
		t.Errorf("first result %q", r.Results[0].Text)
	}
}

func fillHistory(t *testing.T, st *store.Store) []*store.Message {
	t.Helper()
	var msgs []*store.Message
	for i, h := range history {
		role := store.RoleUser
		if h.user == "cyan" {
			role = store.RoleAssistant
		}
		msgs = append(msgs, &store.Message{Channel: h.ch, Role: role, User: h.user, Text: h.text,
			Time: t0.AddDate(0, 0, h.day).Add(time.Duration(i) * time.Minute), ExternalID: fmt.Sprintf("h%d", i)})
	}
	if _, err := st.Import(msgs); err != nil {
		t.Fatal(err)
	}
	return msgs
}

func syncIndex(t *testing.T, x *Index) {
	t.Helper()
	if err := x.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func texts(r *Response) []string {
	var out []string
	for _, res := range r.Results {
		out = append(out, res.Text)
	}
	return out
}

func TestSearchFindsEnglishChineseJapanese(t *testing.T) {
	x, st := newTestIndex(t, Options{})
	fillHistory(t, st)
	syncIndex(t, x)
	tests := []struct {
		name, prompt, want string
	}{
		{"english, inflected", "why are other people's grade so high", "grades are so high"},
		{"chinese", "微积分的学习方向", "微积分"},
		{"chinese, one word", "知识点", "知识点"},
		{"japanese", "数学の試験", "試験があるので"},
		{"japanese kana", "復習", "一緒に復習"},
		{"full-width letters", "ｅｘａｍ　ｓｃｈｅｄｕｌｅ", "exam schedule"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := x.Search(context.Background(), Query{Prompt: tt.prompt, MaxResults: 3})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Results) == 0 || !strings.Contains(r.Results[0].Text, tt.want) {
				t.Fatalf("top result of %q = %q, want one containing %q", tt.prompt, texts(r), tt.want)
			}
			if !r.Lexical || !r.Vector {
				t.Errorf("lexical %v vector %v, want both", r.Lexical, r.Vector)
			}
		})
	}
}

func TestResultShape(t *testing.T) {
	x, st := newTestIndex(t, Options{})
	msgs := fillHistory(t, st)
	syncIndex(t, x)
	r, err := x.Search(context.Background(), Query{Prompt: "exam schedule notice board", Channel: "qq:group:42", MaxResults: 1, Window: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Results) != 1 {
		t.Fatalf("results = %d, want 1", len(r.Results))
	}
	res := r.Results[0]
	// The hits (messages 1 and 2) and their neighbours merge into one window.
	if res.Location != "message 1 ~ message 3" {
		t.Errorf("location = %q", res.Location)
	}
	want := []string{msgs[9].ID, msgs[10].ID, msgs[11].ID}
	if !slices.Equal(res.MessageIDs, want) {
		t.Errorf("message_ids = %v, want %v", res.MessageIDs, want)
	}
	if !slices.Equal(res.ExternalIDs, []string{"h9", "h10", "h11"}) {
		t.Errorf("external_ids = %v", res.ExternalIDs)
	}
	if !strings.HasPrefix(res.Text, "message1:bob:did anyone see") || res.Source != "history/qq:group:42/2025-03-11" {
		t.Errorf("text %q source %q", res.Text, res.Source)
	}
	if res.Score <= 0 || res.Score > 100 {
		t.Errorf("score = %v, want 0–100", res.Score)
	}
}

func TestFiltersAndLimits(t *testing.T) {
	x, st := newTestIndex(t, Options{})
	fillHistory(t, st)
	syncIndex(t, x)
	ctx := context.Background()
	search := func(q Query) *Response {
		t.Helper()
		r, err := x.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	t.Run("channel", func(t *testing.T) {
		r := search(Query{Prompt: "exam", Channel: "home"})
		for _, res := range r.Results {
			if res.Channel != "home" {
				t.Fatalf("result from %q with channel filter home", res.Channel)
			}
		}
		if r := search(Query{Prompt: "exam", Channel: "nowhere"}); len(r.Results) != 0 {
			t.Fatalf("unknown channel gave %d results", len(r.Results))
		}
	})
	t.Run("date range", func(t *testing.T) {
		since, until := t0.AddDate(0, 0, 25), t0.AddDate(0, 0, 35)
		r := search(Query{Prompt: "park walk cherry trees grades exam", Since: since, Until: until, MaxResults: 10})
		if len(r.Results) == 0 {
			t.Fatal("nothing found in the range")
		}
		for _, res := range r.Results {
			if res.From.Before(since) || !res.To.Before(until) {
				t.Fatalf("result %s–%s outside %s–%s", res.From, res.To, since, until)
			}
		}
	})
	t.Run("max_results", func(t *testing.T) {
		for _, n := range []int{1, 2} {
			if r := search(Query{Prompt: "the exam schedule grades park", MaxResults: n}); len(r.Results) != n {
				t.Fatalf("max_results %d gave %d", n, len(r.Results))
			}
		}
	})
	t.Run("score_threshold", func(t *testing.T) {
		all := search(Query{Prompt: "exam schedule board", MaxResults: 10})
		if len(all.Results) < 2 {
			t.Fatalf("want several results, got %d", len(all.Results))
		}
		scores := []float64{}
		for _, r := range all.Results {
			scores = append(scores, r.Score)
		}
		slices.Sort(scores)
		cut := scores[len(scores)-1]
		some := search(Query{Prompt: "exam schedule board", MaxResults: 10, ScoreThreshold: cut})
		if len(some.Results) == 0 || len(some.Results) >= len(all.Results) {
			t.Fatalf("threshold %v kept %d of %d", cut, len(some.Results), len(all.Results))
		}
		for _, r := range some.Results {
			if r.Score < cut {
				t.Fatalf("score %v under threshold %v", r.Score, cut)
			}
		}
	})
	t.Run("bad queries", func(t *testing.T) {
		for _, q := range []Query{{Prompt: " "}, {Prompt: "x", ScoreThreshold: 101}, {Prompt: "x", MaxResults: -1},
			{Prompt: "x", Since: t0, Until: t0}, {Prompt: strings.Repeat("x", MaxPromptBytes+1)}} {
			if _, err := x.Search(ctx, q); err == nil {
				t.Errorf("query %+v accepted", q)
			}
		}
	})
}

func TestRunFollowsTheStoreAndResumes(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(store.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	x, _ := newTestIndex(t, Options{Store: st, IndexKind: IndexChromem, CacheDir: filepath.Join(dir, "recall")})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- x.Run(ctx) }()
	fillHistory(t, st)
	waitFor(t, func() bool { s := x.Status(); return s.Embedded == s.Messages && s.Vectors == len(history) })
	if err := st.Append(time.Now(), &store.Message{Channel: "home", Role: store.RoleUser, User: "nyalia", Text: "the violin recital is on friday"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		r, err := x.Search(ctx, Query{Prompt: "violin recital"})
		s := x.Status()
		return err == nil && len(r.Results) > 0 && s.Embedded == s.Messages
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
	cache := filepath.Join(dir, "recall", fmt.Sprintf("vectors-%x.gob.gz", x.fp))
	if _, err := os.Stat(cache); err != nil {
		t.Fatalf("no vector cache after a clean stop: %v", err)
	}
	st.Close()

	// Reopen: the cursor is durable, the cache loads, nothing is embedded again.
	for _, damage := range []string{"none", "truncated", "deleted", "garbage"} {
		t.Run(damage, func(t *testing.T) {
			switch damage {
			case "truncated":
				b, _ := os.ReadFile(cache)
				os.WriteFile(cache, b[:len(b)/2], 0o600)
			case "deleted":
				os.Remove(cache)
			case "garbage":
				os.WriteFile(cache, []byte("not a gob at all"), 0o600)
			}
			st, err := store.Open(store.Options{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			x, _ := newTestIndex(t, Options{Store: st, IndexKind: IndexChromem, CacheDir: filepath.Join(dir, "recall")})
			embedded := &countingEmbedder{Embedder: HashEmbedder{}}
			x.emb = embedded
			syncIndex(t, x)
			if s := x.Status(); s.Vectors != len(history)+1 || s.Documents != len(history)+1 {
				t.Fatalf("status after reopen: %+v", s)
			}
			if embedded.n != 0 {
				t.Fatalf("%d texts embedded again after a restart", embedded.n)
			}
			r, err := x.Search(context.Background(), Query{Prompt: "violin recital"})
			if err != nil || len(r.Results) == 0 || !r.Vector {
				t.Fatalf("search after reopen: %+v %v", r, err)
			}
			x.saveCache()
		})
	}
}

func TestChangingTheEmbedderReembeds(t *testing.T) {
	x, st := newTestIndex(t, Options{})
	fillHistory(t, st)
	syncIndex(t, x)
	y, _ := newTestIndex(t, Options{Store: st, Embedder: HashEmbedder{Dims: 128}})
	// Before y has embedded anything, it answers lexical-only and says so.
	if err := y.catchUpLexical(context.Background()); err != nil {
		t.Fatal(err)
	}
	r, err := y.Search(context.Background(), Query{Prompt: "exam schedule"})
	if err != nil || len(r.Results) == 0 || r.Vector || !strings.Contains(r.Note, "lexical only") {
		t.Fatalf("before embedding: %+v %v", r, err)
	}
	syncIndex(t, y)
	if s := y.Status(); s.Vectors != len(history) || s.Embedder != (HashEmbedder{Dims: 128}).ID() {
		t.Fatalf("after re-embedding: %+v", s)
	}
	// The previous embedder's vectors are removed once the new one is done.
	if err := y.dropOtherEmbedders(); err != nil {
		t.Fatal(err)
	}
	_, count, _ := x.readState()
	if count != 0 {
		t.Fatalf("the old embedder still has %d vectors", count)
	}
	z, _ := newTestIndex(t, Options{Store: st, Embedder: HashEmbedder{Dims: 128}})
	syncIndex(t, z)
	if s := z.Status(); s.Vectors != len(history) {
		t.Fatalf("the new embedder's vectors were removed: %+v", s)
	}
}

type countingEmbedder struct {
	Embedder
	n int
}

func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.n += len(texts)
	return c.Embedder.Embed(ctx, texts)
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestFlatIndexReloadsTheSameVectors(t *testing.T) {
	x, st := newTestIndex(t, Options{})
	fillHistory(t, st)
	syncIndex(t, x)
	y, _ := newTestIndex(t, Options{Store: st})
	syncIndex(t, y)
	ctx := context.Background()
	for _, q := range []string{"exam schedule", "微积分", "試験", "cherry trees walk"} {
		qv := HashEmbedder{}.Vector(q)
		a, _ := x.vecs.Load().idx.search(ctx, qv, 5, nil, nil)
		b, _ := y.vecs.Load().idx.search(ctx, qv, 5, nil, nil)
		positive := func(h []vecHit) []vecHit { // ties at zero may fall either way
			return slices.DeleteFunc(h, func(v vecHit) bool { return v.sim < 0.01 })
		}
		if a, b = positive(a), positive(b); len(a) == 0 || fmt.Sprint(a) != fmt.Sprint(b) {
			t.Fatalf("%q: fresh %v, reloaded %v", q, a, b)
		}
	}
}

func TestALineOfTheSpeakerTheQueryNamesLeads(t *testing.T) {
	x, st := newTestIndex(t, Options{VectorWeight: hybridOff})
	fillHistory(t, st)
	syncIndex(t, x)
	// Bob's line (h11) names alice and the board; alice's own line (h10) is
	// about the board: people tell their own news.
	best := func() string {
		r, err := x.Search(context.Background(), Query{Prompt: "alice board", Channel: "qq:group:42"})
		if err != nil || len(r.Results) == 0 || len(r.Results[0].Hits) == 0 {
			t.Fatalf("%+v %v", r, err)
		}
		res := r.Results[0]
		return res.ExternalIDs[slices.Index(res.MessageIDs, res.Hits[0])]
	}
	if got := best(); got != "h10" {
		t.Errorf("best hit %s, want alice's own line h10", got)
	}
	x.p.speaker = 0
	if got := best(); got != "h11" {
		t.Errorf("without the boost the best hit is %s; the test wants bob's line h11 there, so that it shows the boost", got)
	}
}

// TestRunStopsWhileTheTableIsRead: a shutdown does not wait for the
// built-in embedder's table, which takes seconds to read on a busy
// machine; Run returns once ctx ends, the read going on alone.
func TestRunStopsWhileTheTableIsRead(t *testing.T) {
	x, _ := newTestIndex(t, Options{Embedder: GloveEmbedder{}})
	started, release := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(release) })
	x.readTable = func() error {
		close(started)
		<-release
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- x.Run(ctx) }()
	<-started
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run = %v", err)
		}
	case <-time.After(time.Minute): // a guard against a hang, not a timing
		t.Fatal("Run did not return after its context ended while the table was read")
	}
	if x.Status().VectorReady {
		t.Error("the vectors are ready though their embedder's table was never read")
	}
}

// A panic in what untilDone runs is its error, not the process's end.
func TestUntilDoneTurnsAPanicIntoAnError(t *testing.T) {
	err := untilDone(context.Background(), func() error { panic("corrupt table") })
	if err == nil || !strings.Contains(err.Error(), "corrupt table") {
		t.Fatalf("err %v, want the panic as an error", err)
	}
}
