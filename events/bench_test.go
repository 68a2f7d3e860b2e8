package events

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/mainvirtual"
	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/recall"
	"github.com/cyan-agent/cyan/store"
	"github.com/dgraph-io/badger/v4"
)

// BenchmarkSection100k renders the events section of a channel holding
// 100,000 topic records (about three years at one every ten minutes) and
// their day, week, month and year records, with the real token counter.
func BenchmarkSection100k(b *testing.B) {
	now := day(2026, 6, 1, 12, 0)
	f := newFixture(b, now, testConfig())
	start := now.Add(-100000 * 10 * time.Minute)
	cal := f.log.cal
	var batch []*Event
	flush := func() {
		err := f.log.db.Update(func(txn *badger.Txn) error {
			for _, e := range batch {
				if err := putEvent(txn, e); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		batch = batch[:0]
	}
	seen := map[string]bool{}
	for i := range 100000 {
		at := start.Add(time.Duration(i) * 10 * time.Minute)
		e := record("bench", LevelEvent, at, fmt.Sprintf("topic %d: amy and I talked about the garden, the weather and her exams", i), float64(i%10)/10)
		batch = append(batch, e)
		for _, lv := range rollupLevels {
			p := cal.periodOf(lv, at)
			if k := string(lv) + p.start.String(); !seen[k] && !p.end.After(now) {
				seen[k] = true
				batch = append(batch, record("bench", lv, p.start, fmt.Sprintf("%s of gardening and exams with amy", lv), 0.5))
			}
		}
		if len(batch) >= 2000 {
			flush()
		}
	}
	flush()
	counter := new(mainvirtual.TokenCounter)
	q := SectionQuery{Channel: "bench", Speaker: "amy", Now: now}
	sec, err := f.log.Section(context.Background(), q, 800, counter.Count)
	if err != nil || sec.Body == "" {
		b.Fatalf("section: %v", err)
	}
	b.ReportMetric(float64(len(sec.Items)), "candidates")
	b.ResetTimer()
	for b.Loop() {
		if _, err := f.log.Section(context.Background(), q, 800, counter.Count); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuildHistory builds the records of 100,000 history messages
// (5,000 topics over 142 days) in one channel, with a writer that answers at
// once: the cost of the hook an importer calls, without the model's time.
func BenchmarkBuildHistory(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		f := newFixture(b, day(2026, 1, 1, 0, 0), testConfig())
		var msgs []*store.Message
		at := day(2025, 7, 1, 8, 0)
		for i := range 100000 {
			if i%20 == 0 {
				at = at.Add(31 * time.Minute) // a new topic after the silence
			}
			at = at.Add(30 * time.Second)
			msgs = append(msgs, &store.Message{Channel: "h", Role: store.RoleUser, User: "amy", Text: fmt.Sprintf("message %d", i), Time: at})
		}
		for i := 0; i < len(msgs); i += 5000 {
			if err := f.st.AppendHistory(msgs[i : i+5000]...); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		rep, err := f.log.BuildHistory(context.Background(), "h", time.Time{}, time.Time{})
		if err != nil || rep.Written != 5000 {
			b.Fatalf("%+v %v", rep, err)
		}
		b.ReportMetric(float64(rep.Messages)/b.Elapsed().Seconds(), "msgs/s")
	}
}

// BenchmarkOpenRecord opens the last day record and the last topic of a
// channel of 100,000 history messages (5,000 topics over 142 days, with
// their day, week and month records), and then the topic's range:
// numbered by reading the channel from its start (scan), and by the recall
// index's positions (index, what the daemon does once the index holds
// every message).
func BenchmarkOpenRecord(b *testing.B) {
	ctx := context.Background()
	f := newFixture(b, day(2026, 1, 1, 0, 0), testConfig())
	f.withRanges()
	var msgs []*store.Message
	at := day(2025, 7, 1, 8, 0)
	for i := range 100000 {
		if i%20 == 0 {
			at = at.Add(31 * time.Minute)
		}
		at = at.Add(30 * time.Second)
		msgs = append(msgs, &store.Message{Channel: "h", Role: store.RoleUser, User: "amy", Text: fmt.Sprintf("message %d", i), Time: at})
	}
	for i := 0; i < len(msgs); i += 1000 {
		if err := f.st.AppendHistory(msgs[i : i+1000]...); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := f.log.BuildHistory(ctx, "h", time.Time{}, time.Time{}); err != nil {
		b.Fatal(err)
	}
	days, topics := f.events(b, "h", LevelDay), f.events(b, "h", LevelEvent)
	x, err := recall.New(recall.Options{Store: f.st})
	if err != nil {
		b.Fatal(err)
	}
	if err := x.Sync(ctx); err != nil {
		b.Fatal(err)
	}
	scan := f.log.ranges
	indexed := func(ctx context.Context, channel string, runs []Run) ([][]string, error) {
		in := make([]recall.Run, len(runs))
		for i, r := range runs {
			in[i] = recall.Run{First: r.First, Last: r.Last}
		}
		rs, err := x.HistoryRanges(ctx, channel, in)
		out := make([][]string, len(rs))
		for i, r := range rs {
			for _, rg := range r {
				out[i] = append(out[i], rg.String())
			}
		}
		return out, err
	}
	for _, how := range []struct {
		name   string
		ranges HistoryRanges
		open   func(context.Context, packets.Reader, string, string) (string, error)
	}{{"scan", scan, recall.OpenHistory(f.st)}, {"index", indexed, x.OpenHistory()}} {
		for _, tc := range []struct {
			name string
			e    *Event
		}{{"day", days[len(days)-1]}, {"topic", topics[len(topics)-1]}} {
			b.Run(how.name+"/"+tc.name, func(b *testing.B) {
				f.log.ranges = how.ranges
				ref := RefEvent + tc.e.Label
				out, err := f.log.Open(ctx, ownerReader("h"), ref, "")
				if err != nil || !strings.Contains(out, "message 100000") {
					b.Fatalf("open %s: %v\n%s", ref, err, out)
				}
				for b.Loop() {
					if _, err := f.log.Open(ctx, ownerReader("h"), ref, ""); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		b.Run(how.name+"/its-range", func(b *testing.B) {
			for b.Loop() {
				if out, err := how.open(ctx, ownerReader("h"), "history/h/2025-11-20", "message 99981 ~ message 100000"); err != nil || !strings.Contains(out, "message 99999") {
					b.Fatalf("%v %q", err, out)
				}
			}
		})
	}
}

// BenchmarkTopicTheories fills the theories' part of the pulled-info area
// for a turn: the topic's last 12 messages matched against 1,000 theories
// of six lines through the recall index, with the real token counter —
// what matching adds to every turn.
func BenchmarkTopicTheories(b *testing.B) {
	ctx := context.Background()
	t0 := day(2026, 6, 3, 20, 0)
	f := newFixture(b, t0, testConfig())
	x := f.withTheories(b)
	subjects := []string{"zebra", "tea", "sleep", "garden", "exam", "rain", "piano", "bread", "cat", "river"}
	for i := range 1000 {
		s := subjects[i%len(subjects)]
		var lines []string
		for j := range 6 {
			lines = append(lines, fmt.Sprintf("point %d of theory %d: the %s and the %s behave as observed %d times", j, i, s, subjects[(i+j)%len(subjects)], i*j))
		}
		if _, err := f.log.CreateTheory(fmt.Sprintf("%s theory %d", s, i), strings.Join(lines, "\n"), nil, packets.Scope{Channel: "home", Owner: true}, t0); err != nil {
			b.Fatal(err)
		}
	}
	if err := x.SyncRecords(ctx); err != nil {
		b.Fatal(err)
	}
	for i := range 12 {
		f.say(b, "home", "hareru", fmt.Sprintf("the zebra in the rain again, day %d, and my tea went cold", i), t0.Add(time.Duration(i)*time.Minute))
	}
	counter := new(mainvirtual.TokenCounter)
	q := SectionQuery{Channel: "home", Reader: ownerReader("home"), Now: t0.Add(12 * time.Minute)}
	sec, err := f.log.TopicTheories(ctx, q, 600, counter.Count)
	if err != nil || sec.Body == "" {
		b.Fatalf("%v %+v", err, sec)
	}
	for b.Loop() {
		if _, err := f.log.TopicTheories(ctx, q, 600, counter.Count); err != nil {
			b.Fatal(err)
		}
	}
}
