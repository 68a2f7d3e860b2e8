package events

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/generate"
	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/internal/scripttest"
	"github.com/cyan-agent/cyan/llm"
)

// scriptWriter is a ScriptWriter on the built-in scripts and the fake LLM,
// which answers each script by its response format's name.
func scriptWriter(t *testing.T, answer func(script string, req llmtest.Request) llmtest.Reply) (*ScriptWriter, *scripttest.Rig) {
	t.Helper()
	rig := scripttest.New(t, scripttest.Options{})
	rig.Fake.SetDefault(func(req llmtest.Request) llmtest.Reply {
		if name := scripttest.FormatName(req); name != "" {
			return answer(name, req)
		}
		return llmtest.Reply{Status: http.StatusBadRequest, Body: `{"error":{"message":"no response format"}}`}
	})
	return NewScriptWriter(rig.Lib), rig
}

func TestScriptWriterAgainstTheFakeLLM(t *testing.T) {
	w, rig := scriptWriter(t, func(script string, req llmtest.Request) llmtest.Reply {
		switch script {
		case ScriptTitle:
			return llmtest.Reply{Text: "<think>who spoke?</think>```json\n{\"title\": \"kemo asked me about RAG\", \"importance\": 7, \"includes\": [\"e1\"]}\n```"}
		case ScriptSummary:
			return llmtest.Reply{Text: `{"title":"a quiet day","importance":0.2}`}
		}
		return llmtest.Reply{Text: `Sure! {"facts":[{"object":"kemo","kind":"person","text":"studies RAG"},{"object":"","kind":"person","text":"dropped"}],"lines":[{"a":"kemo","b":"青蓝","text":"asks me things","strength":0.4}],"reinforce":[],"contradict":["ln1"]}`}
	})
	ctx := context.Background()
	at := day(2026, 2, 16, 3, 16)
	lines := []LogLine{{Time: at, Speaker: "kemo", Text: "RAG or KAG?"}, {Time: at, Speaker: "青蓝", Agent: true, Text: "KAG"}}
	tt, err := w.TitleTopic(ctx, TopicInput{Channel: "home", Agent: "青蓝", Lines: lines, Earlier: []EarlierEvent{{ID: "e1", Label: "20260215 9:00", Title: "kemo started a course"}}})
	if err != nil || tt.Title != "kemo asked me about RAG" || tt.Importance != 0.7 || len(tt.Includes) != 1 {
		t.Fatalf("title %+v %v", tt, err)
	}
	sum, err := w.Summarize(ctx, RollupInput{Channel: "home", Agent: "青蓝", Level: LevelDay, Label: "20260216", Children: []RollupChild{{Label: "20260216 3:16", Title: tt.Title, Importance: 0.7}}})
	if err != nil || sum.Title != "a quiet day" {
		t.Fatalf("summary %+v %v", sum, err)
	}
	ex, err := w.Extract(ctx, ExtractInput{Channel: "home", Agent: "青蓝", Title: tt.Title, Lines: lines,
		Objects: []KnownObject{{Name: "kemo", Kind: KindPerson, Blocks: []string{"studies at night"}}},
		Known:   []KnownLine{{ID: "ln1", A: "kemo", B: "青蓝", Text: "kemo ignores my advice"}}})
	if err != nil || len(ex.Facts) != 1 || len(ex.Lines) != 1 || ex.Contradict[0] != "ln1" {
		t.Fatalf("extraction %+v %v", ex, err)
	}
	// Each step is one call, rendered by its script (golden files under
	// testdata/scripts), and traced with its channel.
	chats := rig.Chats()
	if len(chats) != 3 {
		t.Fatalf("%d chat requests", len(chats))
	}
	for i, name := range []string{ScriptTitle, ScriptSummary, ScriptExtract} {
		if got := scripttest.FormatName(chats[i]); got != name {
			t.Errorf("call %d asks for format %q, want %q", i, got, name)
		}
		scripttest.Golden(t, "scripts/"+name+".golden", scripttest.Render(chats[i]))
	}
	if user := chats[0].Messages[1].Content; !strings.Contains(user, "[2026-02-16 03:16] kemo: RAG or KAG?") || !strings.Contains(user, `"id": "e1"`) {
		t.Fatalf("title request: %s", user)
	}
	list, err := rig.Traces.List(generate.Filter{Channel: "home"})
	if err != nil || len(list) != 3 {
		t.Fatalf("traces of channel home: %d %v", len(list), err)
	}

	// A title the agent gave is kept, and the script is told so.
	named, err := w.TitleTopic(ctx, TopicInput{Channel: "home", Agent: "青蓝", Lines: lines, Title: "we chose KAG"})
	if err != nil || named.Title != "we chose KAG" {
		t.Fatalf("agent's title %+v %v", named, err)
	}
	if user := rig.Chats()[3].Messages[1].Content; !strings.Contains(user, "青蓝 closed this topic as: we chose KAG") {
		t.Fatalf("the script is not told the agent's title: %s", user)
	}

	// A provider failure is an error (the log retries), not a made-up title.
	bad, _ := scriptWriter(t, func(string, llmtest.Request) llmtest.Reply { return llmtest.Reply{Status: 500} })
	if _, err := bad.Summarize(ctx, RollupInput{Level: LevelDay, Label: "20260216"}); err == nil || llm.KindOf(err) != llm.Server {
		t.Fatalf("server failure: %v", err)
	}
	junk, _ := scriptWriter(t, func(string, llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "I cannot do that"} })
	if _, err := junk.TitleTopic(ctx, TopicInput{Lines: lines}); err == nil {
		t.Fatal("an answer without JSON was accepted")
	}
}

func TestScriptWriterKeepsLongLogsWithinBounds(t *testing.T) {
	w := &ScriptWriter{LogChars: 300}
	var lines []LogLine
	for i := range 100 {
		lines = append(lines, LogLine{Speaker: "amy", Text: strings.Repeat("x", 20) + string(rune('a'+i%26))})
	}
	out := w.log(lines, 5)
	if len(out) > 400 || !strings.Contains(out, "messages left out") || !strings.HasSuffix(out, lines[99].Text) {
		t.Fatalf("log of %d chars:\n%s", len(out), out)
	}
}
