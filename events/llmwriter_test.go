package events

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/llm"
)

func llmWriter(t *testing.T, answer func(format string, req llmtest.Request) llmtest.Reply) (*LLMWriter, *llmtest.Server) {
	t.Helper()
	fake := &llmtest.Server{Default: func(req llmtest.Request) llmtest.Reply {
		for _, f := range []string{FormatTitle, FormatSummary, FormatExtract} {
			if strings.Contains(string(req.ResponseFormat), `"`+f+`"`) {
				return answer(f, req)
			}
		}
		return llmtest.Reply{Status: http.StatusBadRequest, Body: `{"error":{"message":"no response format"}}`}
	}}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	c, err := llm.New(llm.Options{BaseURL: srv.URL + "/v1", Model: "fake-model", MaxRetries: 0, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return NewLLMWriter(c), fake
}

func TestLLMWriterAgainstTheFakeLLM(t *testing.T) {
	w, fake := llmWriter(t, func(format string, req llmtest.Request) llmtest.Reply {
		switch format {
		case FormatTitle:
			return llmtest.Reply{Text: "<think>who spoke?</think>```json\n{\"title\": \"kemo asked me about RAG\", \"importance\": 7, \"includes\": [\"e1\"]}\n```"}
		case FormatSummary:
			return llmtest.Reply{Text: `{"title":"a quiet day","importance":0.2}`}
		}
		return llmtest.Reply{Text: `Sure! {"facts":[{"object":"kemo","kind":"person","text":"studies RAG"},{"object":"","kind":"person","text":"dropped"}],"lines":[{"a":"kemo","b":"青蓝","text":"asks me things","strength":0.4}],"reinforce":[],"contradict":["ln1"]}`}
	})
	ctx := context.Background()
	at := day(2026, 2, 16, 3, 16)
	lines := []LogLine{{Time: at, Speaker: "kemo", Text: "RAG or KAG?"}, {Time: at, Speaker: "青蓝", Agent: true, Text: "KAG"}}
	tt, err := w.TitleTopic(ctx, TopicInput{Agent: "青蓝", Lines: lines, Earlier: []EarlierEvent{{ID: "e1", Label: "20260215 9:00", Title: "kemo started a course"}}})
	if err != nil || tt.Title != "kemo asked me about RAG" || tt.Importance != 0.7 || len(tt.Includes) != 1 {
		t.Fatalf("title %+v %v", tt, err)
	}
	sum, err := w.Summarize(ctx, RollupInput{Agent: "青蓝", Level: LevelDay, Label: "20260216", Children: []RollupChild{{Label: "20260216 3:16", Title: tt.Title}}})
	if err != nil || sum.Title != "a quiet day" {
		t.Fatalf("summary %+v %v", sum, err)
	}
	ex, err := w.Extract(ctx, ExtractInput{Agent: "青蓝", Title: tt.Title, Lines: lines})
	if err != nil || len(ex.Facts) != 1 || len(ex.Lines) != 1 || ex.Contradict[0] != "ln1" {
		t.Fatalf("extraction %+v %v", ex, err)
	}
	var chats []llmtest.Request
	for _, r := range fake.Requests() {
		if strings.HasSuffix(r.Path, "/chat/completions") {
			chats = append(chats, r)
		}
	}
	if len(chats) != 3 {
		t.Fatalf("%d chat requests", len(chats))
	}
	first := chats[0]
	if !strings.Contains(string(first.ResponseFormat), `"json_schema"`) || !strings.Contains(first.Messages[1].Content, "[2026-02-16 03:16] kemo: RAG or KAG?") ||
		!strings.Contains(first.Messages[1].Content, "id e1: 20260215 9:00 kemo started a course") {
		t.Fatalf("title request: %s\n%+v", first.ResponseFormat, first.Messages)
	}

	// A provider failure is an error (the log retries), not a made-up title.
	bad, _ := llmWriter(t, func(string, llmtest.Request) llmtest.Reply { return llmtest.Reply{Status: 500} })
	if _, err := bad.Summarize(ctx, RollupInput{Level: LevelDay}); err == nil || llm.KindOf(err) != llm.Server {
		t.Fatalf("server failure: %v", err)
	}
	junk, _ := llmWriter(t, func(string, llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "I cannot do that"} })
	if _, err := junk.TitleTopic(ctx, TopicInput{Lines: lines}); err == nil {
		t.Fatal("an answer without JSON was accepted")
	}
}

func TestLLMWriterKeepsLongLogsWithinBounds(t *testing.T) {
	w := &LLMWriter{LogChars: 300}
	var lines []LogLine
	for i := range 100 {
		lines = append(lines, LogLine{Speaker: "amy", Text: strings.Repeat("x", 20) + string(rune('a'+i%26))})
	}
	var b strings.Builder
	w.writeLog(&b, lines, 5)
	out := b.String()
	if len(out) > 400 || !strings.Contains(out, "messages left out") || !strings.HasSuffix(strings.TrimSpace(out), lines[99].Text) {
		t.Fatalf("log of %d chars:\n%s", len(out), out)
	}
}
