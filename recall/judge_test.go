package recall

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/generate"
	"github.com/cyan-agent/cyan/internal/embedtest"
	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/internal/scripttest"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/store"
)

// fakeJudge is the script judge on the built-in scripts (or a persona's
// overrides) with a fake LLM behind the script library.
func fakeJudge(t *testing.T, personaDir ...string) (*llmtest.Server, Judge, *scripttest.Rig) {
	t.Helper()
	o := scripttest.Options{}
	if len(personaDir) > 0 {
		o.PersonaDir = personaDir[0]
	}
	rig := scripttest.New(t, o)
	return rig.Fake, NewScriptJudge(rig.Lib), rig
}

func chats(fake *llmtest.Server) []llmtest.Request {
	var out []llmtest.Request
	for _, r := range fake.Requests() {
		if strings.HasSuffix(r.Path, "/chat/completions") {
			out = append(out, r)
		}
	}
	return out
}

// userText is a request's last user message: the instruction and the
// passages as context.
func userText(r llmtest.Request) string { return r.Messages[len(r.Messages)-1].Content }

func TestToolModeDropsRejectedAndSummarises(t *testing.T) {
	fake, judge, rig := fakeJudge(t)
	x, st := newTestIndex(t, Options{Judge: judge})
	fillHistory(t, st)
	syncIndex(t, x)
	// Round 1 (a batch of max_results = 2): keep only the second; round 2
	// (sized by the rejection rate) finds the rest, of which none fits; two
	// rounds without a keeper end the search; then the summary.
	fake.Enqueue(
		llmtest.Reply{Text: `{"keep": [2], "give_up": false}`},
		llmtest.Reply{Text: `{"keep": [], "give_up": false}`},
		llmtest.Reply{Text: "```json\n{\"summarized_info\": \"bob asked about the exam schedule; alice said it is on the notice board\"}\n```"},
	)
	r, err := x.Recall(context.Background(), Query{Prompt: "exam schedule and grades", MaxResults: 2}, ModeTool)
	if err != nil {
		t.Fatal(err)
	}
	calls := chats(fake)
	if len(calls) != 3 {
		t.Fatalf("%d model calls, want filter, filter, summary", len(calls))
	}
	for i, name := range []string{ScriptFilter, ScriptFilter, ScriptSummary} {
		if got := scripttest.FormatName(calls[i]); got != name {
			t.Errorf("call %d runs %q, want %q", i, got, name)
		}
	}
	if len(r.Results) != 1 || r.SummarizedInfo != "bob asked about the exam schedule; alice said it is on the notice board" {
		t.Fatalf("results %d, summary %q, note %q", len(r.Results), r.SummarizedInfo, r.Note)
	}
	kept := r.Results[0]
	if !strings.Contains(userText(calls[0]), "[2] "+kept.Source+", "+kept.Location) {
		t.Errorf("the kept passage is not the one numbered 2 in the first filter call:\n%s", userText(calls[0]))
	}
	// The first batch is max_results passages; the second is sized by the
	// rejection rate (here capped by what is left to find: the passages of
	// round 1 are not shown again).
	first, second := passagesIn(userText(calls[0])), passagesIn(userText(calls[1]))
	if first != 2 || second == 0 {
		t.Fatalf("passages per round: %d then %d", first, second)
	}
	if strings.Contains(userText(calls[1]), kept.Source+", "+kept.Location+" ") {
		t.Errorf("round 2 showed the kept passage again")
	}
	if r.Rounds != 2 {
		t.Errorf("rounds = %d, want 2", r.Rounds)
	}
	// The summary sees only what was kept; every call is traced with the
	// conversation it served.
	if passagesIn(userText(calls[2])) != 1 {
		t.Errorf("summary call:\n%s", userText(calls[2]))
	}
	if list, err := rig.Traces.List(generate.Filter{}); err != nil || len(list) != 3 {
		t.Fatalf("traces of the channel: %d %v", len(list), err)
	}
	scripttest.Golden(t, "scripts/recall_summary.golden", scripttest.Render(calls[2]))
}

// passagesIn counts the numbered passages of a request.
func passagesIn(s string) int {
	n := 0
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, "[") && strings.Contains(line, "] ") && !strings.HasPrefix(line, "[passages]") {
			n++
		}
	}
	return n
}

func TestToolModeSizesTheNextSearchByTheRejectionRate(t *testing.T) {
	fake, judge, _ := fakeJudge(t)
	st, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// Forty messages about the garden, three others between each two (so
	// no two are in one passage).
	var msgs []*store.Message
	for i := range 160 {
		text := "nothing to report today"
		if i%4 == 0 {
			text = fmt.Sprintf("the garden needs water, note %d", i)
		}
		msgs = append(msgs, &store.Message{Channel: "home", Role: store.RoleUser, User: "amy",
			Text: text, Time: t0.Add(time.Duration(i) * time.Hour)})
	}
	if _, err := st.Import(msgs); err != nil {
		t.Fatal(err)
	}
	x, _ := newTestIndex(t, Options{Store: st, Judge: judge})
	syncIndex(t, x)
	// Want 4; round 1 keeps 1 of 4 (rate 1/4): round 2 asks for
	// ⌈3 / 0.25⌉ = 12; it keeps 2 of 12 (rate 1/6): round 3 asks for
	// ⌈1 · 6⌉ = 6 and keeps 1: done, then the summary.
	fake.Enqueue(
		llmtest.Reply{Text: `{"keep": [1], "give_up": false}`},
		llmtest.Reply{Text: `{"keep": [3, 5], "give_up": false}`},
		llmtest.Reply{Text: `{"keep": [6], "give_up": false}`},
		llmtest.Reply{Text: `{"summarized_info": "amy keeps asking about the garden"}`},
	)
	r, err := x.Recall(context.Background(), Query{Prompt: "garden water", MaxResults: 4, Window: 1}, ModeTool)
	if err != nil {
		t.Fatal(err)
	}
	calls := chats(fake)
	if len(calls) != 4 || r.Rounds != 3 || len(r.Results) != 4 {
		t.Fatalf("%d calls, %d rounds, %d results (%s)", len(calls), r.Rounds, len(r.Results), r.Note)
	}
	for i, want := range []int{4, 12, 6} {
		if got := passagesIn(userText(calls[i])); got != want {
			t.Errorf("round %d showed %d passages, want %d", i+1, got, want)
		}
	}
	scripttest.Golden(t, "scripts/recall_filter.golden", scripttest.Render(calls[0]))
}

func TestToolModeGivesUpAndSurvivesABadModel(t *testing.T) {
	fake, judge, _ := fakeJudge(t)
	x, st := newTestIndex(t, Options{Judge: judge})
	fillHistory(t, st)
	syncIndex(t, x)
	ctx := context.Background()

	fake.Enqueue(llmtest.Reply{Text: `{"keep": [], "give_up": true}`})
	r, err := x.Recall(ctx, Query{Prompt: "the exam schedule"}, ModeTool)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Results) != 0 || !strings.Contains(r.Note, "gave up") || len(chats(fake)) != 1 {
		t.Fatalf("give up: %d results, note %q, %d calls", len(r.Results), r.Note, len(chats(fake)))
	}

	fake.Reset()
	fake.SetDefault(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Status: 500} })
	r, err = x.Recall(ctx, Query{Prompt: "the exam schedule", MaxResults: 2}, ModeTool)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Results) == 0 || !strings.Contains(r.Note, "unfiltered") {
		t.Fatalf("a failing model must leave unfiltered results with a note: %d, %q", len(r.Results), r.Note)
	}
	fake.SetDefault(nil)

	// A filter that answers but whose summary fails keeps the passages.
	fake.Reset()
	fake.Enqueue(llmtest.Reply{Text: `{"keep": [1], "give_up": false}`}, llmtest.Reply{Text: "no JSON here"}, llmtest.Reply{Text: "still none"})
	r, err = x.Recall(ctx, Query{Prompt: "the exam schedule", MaxResults: 1}, ModeTool)
	if err != nil || len(r.Results) != 1 || r.SummarizedInfo != "" || !strings.Contains(r.Note, "no summary") {
		t.Fatalf("failed summary: %+v %v", r, err)
	}

	// Search mode never calls the model.
	fake.Reset()
	if _, err := x.Recall(ctx, Query{Prompt: "exam"}, ModeSearch); err != nil || len(chats(fake)) != 0 {
		t.Fatalf("search mode: %v, %d model calls", err, len(chats(fake)))
	}
	if _, err := x.Recall(ctx, Query{Prompt: "exam"}, "guess"); err == nil {
		t.Fatal("an unknown mode was accepted")
	}
}

func TestAPersonaOverridesTheRecallScripts(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	override := "---\nextends: recall_filter\n---\nsystem:\n  notes: [Keep only what the owner said.]\n"
	if err := os.WriteFile(filepath.Join(dir, "scripts", "recall_filter.ai.yaml"), []byte(override), 0o644); err != nil {
		t.Fatal(err)
	}
	fake, judge, _ := fakeJudge(t, dir)
	x, st := newTestIndex(t, Options{Judge: judge})
	fillHistory(t, st)
	syncIndex(t, x)
	fake.Enqueue(llmtest.Reply{Text: `{"keep": [], "give_up": true}`})
	if _, err := x.Recall(context.Background(), Query{Prompt: "exam"}, ModeTool); err != nil {
		t.Fatal(err)
	}
	if sys := chats(fake)[0].Messages[0].Content; !strings.Contains(sys, "Keep only what the owner said.") || !strings.Contains(sys, "sort recalled passages") {
		t.Fatalf("the persona's override is not in use:\n%s", sys)
	}
}

func TestToolPullsAndReviews(t *testing.T) {
	fake, judge, _ := fakeJudge(t)
	x, st := newTestIndex(t, Options{Judge: judge})
	fillHistory(t, st)
	syncIndex(t, x)
	fake.SetDefault(func(req llmtest.Request) llmtest.Reply {
		if scripttest.FormatName(req) == ScriptSummary {
			return llmtest.Reply{Text: `{"summarized_info": "alice said the schedule is on the board"}`}
		}
		return llmtest.Reply{Text: `{"keep": [1], "give_up": false}`}
	})
	type pull struct{ ch, ref, loc, summary string }
	var pulls []pull
	var reviewed []Result
	tool := x.Tools(ToolOptions{
		Pull:     func(ch, ref, loc, summary string) { pulls = append(pulls, pull{ch, ref, loc, summary}) },
		Reviewed: func(_ context.Context, ch string, rs []Result) { reviewed = append(reviewed, rs...) },
	})[0]
	run := func(channel string, owner bool, args string) (string, error) {
		kind := "group"
		if owner {
			kind = "private"
		}
		res, err := tool.Run(context.Background(), &packets.ToolCall{Tool: tool.Name, Caller: packets.Caller{Channel: channel, Kind: kind}, Owner: owner, Args: json.RawMessage(args)})
		return res.OutputText, err
	}
	if tool.Name != "recall" || !json.Valid(tool.Parameters) {
		t.Fatalf("tool %q params %s", tool.Name, tool.Parameters)
	}
	out, err := run("qq:group:42", false, `{"prompt": "exam schedule", "max_results": 1, "score_threshold": 0}`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "summarized_info: alice said") || !strings.Contains(out, "location: message") {
		t.Fatalf("tool answer:\n%s", out)
	}
	// The group's call never sees the private channel.
	if strings.Contains(out, "nyalia") {
		t.Fatalf("the tool leaked another channel:\n%s", out)
	}
	if len(pulls) != 1 || pulls[0].ch != "qq:group:42" || pulls[0].ref != "history/qq:group:42/2025-03-11" ||
		!strings.HasPrefix(pulls[0].loc, "message ") || !strings.HasPrefix(pulls[0].summary, "message") {
		t.Fatalf("pulled = %+v", pulls)
	}
	if len(reviewed) != 1 || len(reviewed[0].MessageIDs) == 0 || reviewed[0].Channel != "qq:group:42" {
		t.Fatalf("reviewed = %+v", reviewed)
	}
	for _, bad := range []string{`{"prompt": 3}`, `{"prompt": "x", "max_results": 0}`, `{"prompt": "x", "colour": "red"}`, `not json`} {
		if _, err := run("home", true, bad); err == nil {
			t.Errorf("arguments %s accepted", bad)
		}
	}
	// The owner's own search through Recall pulls and reviews nothing.
	pulls, reviewed = nil, nil
	if _, err := x.Recall(context.Background(), Query{Prompt: "exam schedule", Channel: "qq:group:42"}, ModeTool); err != nil || len(pulls)+len(reviewed) != 0 {
		t.Fatalf("Recall pulled %d, reviewed %d (%v)", len(pulls), len(reviewed), err)
	}
}

func newModelEmbedder(t *testing.T, provider, base, model string) *ModelEmbedder {
	t.Helper()
	e, err := llm.NewEmbedder(llm.EmbedOptions{Provider: provider, BaseURL: base, Model: model, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return NewModelEmbedder(e, provider, model)
}

func TestModelEmbedders(t *testing.T) {
	fake := &embedtest.Server{Models: []string{"nomic-embed-text", "text-embedding-3-small"}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	ctx := context.Background()
	for _, e := range []*ModelEmbedder{
		newModelEmbedder(t, "ollama", srv.URL, "nomic-embed-text"),
		newModelEmbedder(t, "ollama", srv.URL+"/api/", "nomic-embed-text"),
		newModelEmbedder(t, "openai", srv.URL+"/v1", "text-embedding-3-small"),
	} {
		vs, err := e.Embed(ctx, []string{"exam schedule", "cherry trees"})
		if err != nil {
			t.Fatalf("%s: %v", e.ID(), err)
		}
		if len(vs) != 2 || dot(vs[0], fake.Vector("exam schedule")) < 0.99 {
			t.Fatalf("%s: vectors in the wrong order or shape", e.ID())
		}
		if u := e.Usage(); u.Calls != 1 || u.Texts != 2 || u.Tokens != 4 {
			t.Errorf("%s: usage %+v", e.ID(), u)
		}
	}
	missing := newModelEmbedder(t, "ollama", srv.URL, "bge-m3")
	if _, err := missing.Embed(ctx, []string{"x"}); err == nil || !strings.Contains(err.Error(), "ollama pull bge-m3") {
		t.Fatalf("a missing model must say how to get it: %v", err)
	}
	if u := missing.Usage(); u.Failures != 1 {
		t.Errorf("failures %+v", u)
	}
	down := newModelEmbedder(t, "ollama", "http://127.0.0.1:1", "m")
	if _, err := down.Embed(ctx, []string{"x"}); err == nil || !strings.Contains(err.Error(), "builtin") {
		t.Fatalf("an unreachable server must suggest the builtin embedder: %v", err)
	}
	// An index over a model embedder fills and searches like the builtin,
	// and meters what it embedded.
	x, st := newTestIndex(t, Options{Embedder: newModelEmbedder(t, "ollama", srv.URL, "nomic-embed-text")})
	fillHistory(t, st)
	syncIndex(t, x)
	if r, err := x.Search(ctx, Query{Prompt: "cherry trees"}); err != nil || len(r.Results) == 0 || !r.Vector {
		t.Fatalf("model-embedder index: %+v %v", r, err)
	}
	if s := x.Status(); s.EmbedUsage == nil || s.EmbedUsage.Texts < int64(len(history)) {
		t.Errorf("status usage %+v", s.EmbedUsage)
	}
}
