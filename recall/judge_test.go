package recall

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/llm"
)

func fakeJudge(t *testing.T) (*llmtest.Server, Judge) {
	t.Helper()
	fake := &llmtest.Server{}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	client, err := llm.New(llm.Options{BaseURL: srv.URL + "/v1", Model: "fake-model", MaxRetries: 0})
	if err != nil {
		t.Fatal(err)
	}
	return fake, &LLMJudge{Client: client}
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

func TestToolModeDropsRejectedAndSummarises(t *testing.T) {
	fake, judge := fakeJudge(t)
	var reviewed []string
	x, st := newTestIndex(t, Options{Judge: judge, Reviewed: func(_ string, ids []string) { reviewed = append(reviewed, ids...) }})
	fillHistory(t, st)
	syncIndex(t, x)
	// Round 1: of the passages found, keep only the second; then nothing
	// more fits (round 2 keeps none, round 3 is not needed: two empty
	// rounds end the search); then the summary.
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
	if !strings.Contains(calls[0].Messages[0].Content, "[2] history/") || !strings.Contains(string(calls[0].ResponseFormat), "recall_filter") {
		t.Errorf("filter call: %q %s", calls[0].Messages[0].Content, calls[0].ResponseFormat)
	}
	if len(r.Results) != 1 || r.SummarizedInfo != "bob asked about the exam schedule; alice said it is on the notice board" {
		t.Fatalf("results %d, summary %q, note %q", len(r.Results), r.SummarizedInfo, r.Note)
	}
	kept := r.Results[0]
	if !strings.Contains(calls[0].Messages[0].Content, "[2] "+kept.Source+", "+kept.Location) {
		t.Errorf("the kept passage is not the one numbered 2 in the first filter call")
	}
	if r.Rounds != 2 {
		t.Errorf("rounds = %d, want 2", r.Rounds)
	}
	if len(reviewed) == 0 {
		t.Error("the review hook was not told about the recalled messages")
	}
}

func TestToolModeGivesUpAndSurvivesABadModel(t *testing.T) {
	fake, judge := fakeJudge(t)
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
	fake.Enqueue(llmtest.Reply{Status: 500})
	r, err = x.Recall(ctx, Query{Prompt: "the exam schedule", MaxResults: 2}, ModeTool)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Results) == 0 || !strings.Contains(r.Note, "unfiltered") {
		t.Fatalf("a failing model must leave unfiltered results with a note: %d, %q", len(r.Results), r.Note)
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

func TestToolPullsIntoThePulledArea(t *testing.T) {
	fake, judge := fakeJudge(t)
	x, st := newTestIndex(t, Options{Judge: judge})
	fillHistory(t, st)
	syncIndex(t, x)
	fake.Default = func(req llmtest.Request) llmtest.Reply {
		if strings.Contains(string(req.ResponseFormat), "recall_summary") {
			return llmtest.Reply{Text: `{"summarized_info": "alice said the schedule is on the board"}`}
		}
		return llmtest.Reply{Text: `{"keep": [1], "give_up": false}`}
	}
	tool := x.Tool(nil)
	if tool.Name != "recall" || !json.Valid(tool.Parameters) {
		t.Fatalf("tool %q params %s", tool.Name, tool.Parameters)
	}
	out, err := tool.Run(context.Background(), "qq:group:42", `{"prompt": "exam schedule", "max_results": 1, "score_threshold": 0}`)
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
	items := x.Pulled().View("qq:group:42")
	if len(items) != 1 || !strings.HasPrefix(items[0].Line(), "%[history/qq:group:42/2025-03-11] message ") {
		t.Fatalf("pulled = %+v", items)
	}
	if again := x.Pulled().View("qq:group:42"); len(again) != 0 {
		t.Fatalf("pulled items must be shown once, got %d again", len(again))
	}
	for _, bad := range []string{`{"prompt": 3}`, `{"prompt": "x", "max_results": 0}`, `{"prompt": "x", "colour": "red"}`, `not json`} {
		if _, err := tool.Run(context.Background(), "home", bad); err == nil {
			t.Errorf("arguments %s accepted", bad)
		}
	}
}

func TestRemoteEmbedders(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		got = append(got, r.URL.Path+" "+req.Model)
		vec := func(s string) []float32 { return HashEmbedder{Dims: 32}.Vector(s) }
		switch r.URL.Path {
		case "/api/embed":
			var out [][]float32
			for _, s := range req.Input {
				out = append(out, vec(s))
			}
			json.NewEncoder(w).Encode(map[string]any{"embeddings": out})
		case "/v1/embeddings":
			var data []map[string]any
			for i := len(req.Input) - 1; i >= 0; i-- { // out of order: index decides
				data = append(data, map[string]any{"index": i, "embedding": vec(req.Input[i])})
			}
			json.NewEncoder(w).Encode(map[string]any{"data": data})
		default:
			http.Error(w, `{"error":"model not found"}`, http.StatusNotFound)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	for _, e := range []*RemoteEmbedder{
		{Provider: "ollama", BaseURL: srv.URL, Model: "nomic-embed-text"},
		{Provider: "ollama", BaseURL: srv.URL + "/api/", Model: "nomic-embed-text"},
		{Provider: "openai", BaseURL: srv.URL + "/v1", Model: "text-embedding-3-small"},
	} {
		vs, err := e.Embed(ctx, []string{"exam schedule", "cherry trees"})
		if err != nil {
			t.Fatalf("%s: %v", e.ID(), err)
		}
		if len(vs) != 2 || dot(vs[0], HashEmbedder{Dims: 32}.Vector("exam schedule")) < 0.99 {
			t.Fatalf("%s: vectors in the wrong order or shape", e.ID())
		}
	}
	bad := &RemoteEmbedder{Provider: "openai", BaseURL: srv.URL + "/nope", Model: "m"}
	if _, err := bad.Embed(ctx, []string{"x"}); err == nil || !strings.Contains(err.Error(), "embed.model") {
		t.Fatalf("a 404 must say what to check: %v", err)
	}
	down := &RemoteEmbedder{Provider: "ollama", BaseURL: "http://127.0.0.1:1", Model: "m"}
	if _, err := down.Embed(ctx, []string{"x"}); err == nil || !strings.Contains(err.Error(), "builtin") {
		t.Fatalf("an unreachable server must suggest the builtin embedder: %v", err)
	}
	// An index over a remote embedder fills and searches like the builtin.
	x, st := newTestIndex(t, Options{Embedder: &RemoteEmbedder{Provider: "ollama", BaseURL: srv.URL, Model: "nomic-embed-text"}})
	fillHistory(t, st)
	syncIndex(t, x)
	if r, err := x.Search(ctx, Query{Prompt: "cherry trees"}); err != nil || len(r.Results) == 0 || !r.Vector {
		t.Fatalf("remote-embedder index: %+v %v", r, err)
	}
}
