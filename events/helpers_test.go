package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/store"
)

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// fakeWriter titles a topic with its first line, summarises a period by
// joining its children's titles, and can be told to fail.
type fakeWriter struct {
	mu            sync.Mutex
	failTitle     int // fail this many TitleTopic calls
	failSummary   int // fail this many Summarize calls
	titles        int
	summaries     []RollupInput
	extract       func(ExtractInput) Extraction
	extractInputs []ExtractInput
	includes      func(TopicInput) []string
}

func (w *fakeWriter) TitleTopic(_ context.Context, in TopicInput) (TopicTitle, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.failTitle > 0 {
		w.failTitle--
		return TopicTitle{}, errors.New("title writer down")
	}
	w.titles++
	out := TopicTitle{Title: in.Lines[0].Speaker + ": " + in.Lines[0].Text, Importance: 0.5}
	if strings.Contains(in.Lines[0].Text, "important") {
		out.Importance = 1
	}
	if in.Title != "" {
		out.Title = in.Title
	}
	if w.includes != nil {
		out.Includes = w.includes(in)
	}
	return out, nil
}

func (w *fakeWriter) Summarize(_ context.Context, in RollupInput) (Summary, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.failSummary > 0 {
		w.failSummary--
		return Summary{}, errors.New("summary writer down")
	}
	w.summaries = append(w.summaries, in)
	var parts []string
	for _, c := range in.Children {
		parts = append(parts, c.Title)
	}
	return Summary{Title: fmt.Sprintf("%s of %d: %s", in.Level, len(in.Children), strings.Join(parts, " | ")), Importance: 0.4}, nil
}

func (w *fakeWriter) Extract(_ context.Context, in ExtractInput) (Extraction, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.extractInputs = append(w.extractInputs, in)
	if w.extract != nil {
		return w.extract(in), nil
	}
	return Extraction{}, nil
}

func (w *fakeWriter) summaryCount(level Level) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, s := range w.summaries {
		if s.Level == level {
			n++
		}
	}
	return n
}

// testEscape marks line-start notation like main-virtual's Escape does.
func testEscape(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "^") || strings.HasPrefix(l, "#") {
			lines[i] = `\` + l
		}
	}
	return strings.Join(lines, "\n")
}

type fixture struct {
	st  *store.Store
	log *Log
	w   *fakeWriter
	clk *fakeClock
}

func testConfig() config.Events { return config.Defaults().Events }

func newFixture(t testing.TB, start time.Time, cfg config.Events) *fixture {
	t.Helper()
	st, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f := &fixture{st: st, w: &fakeWriter{}, clk: &fakeClock{t: start}}
	f.log, err = New(Options{
		Store: st, Config: cfg, Writer: f.w, AgentName: func() string { return "青蓝" },
		Escape: testEscape, Location: time.UTC, Now: f.clk.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// say stores a live message at time at.
func (f *fixture) say(t testing.TB, channel, user, text string, at time.Time) *store.Message {
	t.Helper()
	role := store.RoleUser
	if user == "青蓝" {
		role = store.RoleAssistant
	}
	m := &store.Message{Channel: channel, Role: role, User: user, Text: text, Time: at}
	if err := f.st.Append(at, m); err != nil {
		t.Fatal(err)
	}
	return m
}

func (f *fixture) process(t testing.TB, at time.Time) *Report {
	t.Helper()
	f.clk.Set(at)
	rep, err := f.log.Process(context.Background(), at, ProcessOptions{Rollups: true})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func (f *fixture) events(t testing.TB, channel string, level Level) []*Event {
	t.Helper()
	evs, err := f.log.Events(Filter{Channel: channel, Level: level, Limit: 100000}, f.clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func day(y int, m time.Month, d, h, min int) time.Time {
	return time.Date(y, m, d, h, min, 0, 0, time.UTC)
}

// ownerReader is the owner talking in private in channel, with the
// owner's default knowledge rights.
// callAs is a tool call a reader makes with args: the registry's
// resolved call (packets.ToolCall) of that reader.
func callAs(r packets.Reader, args string) *packets.ToolCall {
	kind := "private"
	if !r.Private {
		kind = "group"
	}
	return &packets.ToolCall{Caller: packets.Caller{Channel: r.Channel, Kind: kind}, Owner: r.Owner, Perm: r.Perm, Args: json.RawMessage(args)}
}

func ownerReader(channel string) packets.Reader {
	return packets.Reader{Channel: channel, Owner: true, Private: true,
		Perm: &packets.Permission{Infos: []string{"**"}, SelfEdit: []string{"events:**", "objects:**", "theories:**"}}}
}
