package events

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/mainvirtual"
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
