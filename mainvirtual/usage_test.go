package mainvirtual

import (
	"context"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/turn"
)

// reportTools offers workspace_usage (a quiet report) and read_file (whose
// results are file contents).
type reportTools struct{}

func (reportTools) Offer(turn.Query) []llm.Tool {
	return []llm.Tool{{Name: turn.UsageToolName, Description: "report"}, {Name: "read_file", Description: "read"}}
}

func (reportTools) Call(_ context.Context, _ turn.Query, c llm.ToolCall) turn.ToolResult {
	if c.Name == turn.UsageToolName {
		return turn.ToolResult{Text: "noted", Quiet: true}
	}
	return turn.ToolResult{Text: "SECRET=hunter2 from notes.txt", Transient: true}
}

func TestCutUsage(t *testing.T) {
	for _, tc := range []struct {
		name, in, text string
		used, maybe    []string
	}{
		{"none", "hello", "hello", nil, nil},
		{"trailing", "sure, at 9\n<workspace_usage used=\"w1,w3\" maybe=\"w2\"/>", "sure, at 9\n", []string{"w1", "w3"}, []string{"w2"}},
		{"spaces and close tag", "ok <workspace_usage maybe = \"w4 w5\" used=\"\"></workspace_usage>", "ok ", nil, []string{"w4", "w5"}},
		{"twice", "<workspace_usage used=\"w1\"/>a<workspace_usage used=\"w1, w2\"/>", "a", []string{"w1", "w2"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text, u := cutUsage(tc.in)
			if text != tc.text {
				t.Fatalf("text = %q, want %q", text, tc.text)
			}
			if tc.used == nil && tc.maybe == nil && tc.name == "none" {
				if u != nil {
					t.Fatalf("usage = %+v for no trailer", u)
				}
				return
			}
			if u == nil || u.Path != turn.UsageTrailer || strings.Join(u.Used, ",") != strings.Join(tc.used, ",") || strings.Join(u.Maybe, ",") != strings.Join(tc.maybe, ",") {
				t.Fatalf("usage = %+v", u)
			}
		})
	}
}

// A plain turn costs one model request, whichever way the model reports
// its workspace use: a workspace_usage call needs no follow-up, and the
// trailer is part of the answer.
func TestUsageReportCostsNoExtraRequest(t *testing.T) {
	r := newRig(t, func(o *Options) { o.Tools = reportTools{}; o.Agent.MaxToolSteps = 4 })
	r.fake.Enqueue(llmtest.Reply{Text: "your passport expires in march", ToolCalls: []llm.ToolCall{{Name: turn.UsageToolName, Arguments: `{"used":["w1"],"maybe":[]}`}}})
	res := r.turn(t, "alice", "when does my passport expire?")
	if n := len(r.fake.Requests()); n != 1 {
		t.Fatalf("%d model requests for a plain turn with a usage call, want 1", n)
	}
	if res.Usage.Path != turn.UsageTool || res.Trace.Usage != turn.UsageTool || len(replyTexts(res.Replies)) != 1 {
		t.Fatalf("usage %+v, trace %q, replies %q", res.Usage, res.Trace.Usage, replyTexts(res.Replies))
	}

	var live strings.Builder
	r.fake.Enqueue(llmtest.Reply{Text: "in march@br safe travels <workspace_usage used=\"w1\" maybe=\"w2\"/>"})
	res, err := r.mv.Turn(context.Background(), turn.Incoming{Channel: "home", User: "alice", Text: "thanks"}, turn.Listener{Stream: func(e turn.StreamEvent) error {
		if e.Break {
			live.WriteString("|")
		}
		live.WriteString(e.Text)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(r.fake.Requests()); n != 2 {
		t.Fatalf("%d model requests after two plain turns, want 2", n)
	}
	if got := strings.Join(replyTexts(res.Replies), "|"); got != "in march|safe travels" || live.String() != got {
		t.Fatalf("replies %q, streamed %q: the trailer must reach no one", got, live.String())
	}
	if res.Usage.Path != turn.UsageTrailer || strings.Join(res.Usage.Used, ",") != "w1" || strings.Join(res.Usage.Maybe, ",") != "w2" {
		t.Fatalf("usage = %+v", res.Usage)
	}
	// The usage report never shows in later tool-call areas.
	r.fake.Enqueue(llmtest.Reply{Text: "hi"})
	r.turn(t, "alice", "hello")
	if sys := lastRequest(t, r.fake).Messages[0].Content; strings.Contains(sys, "noted") {
		t.Fatalf("the usage report is shown again:\n%s", sys)
	}
}

// A file read in one turn is shown until the next user message, then
// forgotten (the stored result stays in history).
func TestFileReadIsForgottenAtTheNextUserMessage(t *testing.T) {
	r := newRig(t, func(o *Options) { o.Tools = reportTools{}; o.Agent.MaxToolSteps = 3 })
	r.fake.Enqueue(
		llmtest.Reply{ToolCalls: []llm.ToolCall{{Name: "read_file", Arguments: `{"path":"notes.txt"}`}}},
		llmtest.Reply{Text: "read it"},
	)
	r.turn(t, "alice", "read notes.txt")
	// Within the turn the result came back as the tool's message.
	if reqs := r.fake.Requests(); !strings.Contains(reqs[1].Messages[len(reqs[1].Messages)-1].Content, "hunter2") {
		t.Fatalf("the file's contents did not reach the model in its turn")
	}
	// A proactive turn before the next user message still shows it.
	r.fake.Enqueue(llmtest.Reply{Text: "<empty_reply>"})
	if _, err := r.mv.Proactive(context.Background(), "home", "", "plan p1 is due", turn.Listener{}); err != nil {
		t.Fatal(err)
	}
	if sys := lastRequest(t, r.fake).Messages[0].Content; !strings.Contains(sys, "hunter2") {
		t.Fatalf("before the next user message the file is still shown:\n%s", sys)
	}
	r.fake.Enqueue(llmtest.Reply{Text: "hello"})
	res := r.turn(t, "alice", "what's up")
	if sys := lastRequest(t, r.fake).Messages[0].Content; strings.Contains(sys, "hunter2") {
		t.Fatalf("the file read before this user message is still in the prompt:\n%s", sys)
	}
	forgot := false
	for _, s := range res.Trace.Packet.Sections {
		for _, it := range s.Items {
			forgot = forgot || strings.Contains(it.Reason, "forgotten")
		}
	}
	if !forgot {
		t.Fatalf("the trace does not say the file was forgotten: %+v", res.Trace.Packet.Sections)
	}
	all, _ := r.store.Recent("home", store.Window{Limit: 20})
	kept := false
	for _, m := range all {
		kept = kept || (m.Role == store.RoleTool && strings.Contains(m.Text, "hunter2") && m.Area == store.AreaTurn)
	}
	if !kept {
		t.Fatal("the read's result is not in the history")
	}
}

// The default root prompt gets the time with its zone, the kind of the
// conversation and the speaker.
func TestRootPromptHasNowKindAndSpeaker(t *testing.T) {
	r := newRig(t, nil)
	r.fake.Enqueue(llmtest.Reply{Text: "ok"})
	if _, err := r.mv.Turn(context.Background(), turn.Incoming{Channel: "qq:group:5", Kind: turn.KindGroup, User: "kemo", Text: "hi"}, turn.Listener{}); err != nil {
		t.Fatal(err)
	}
	sys := lastRequest(t, r.fake).Messages[0].Content
	for _, want := range []string{"It is now 2026-11-22 10:31 Sunday UTC +00:00.", "a group channel", "from kemo."} {
		if !strings.Contains(sys, want) {
			t.Errorf("root prompt lacks %q:\n%s", want, sys)
		}
	}
}

// "@last_kemo" in the model's answer reaches everyone expanded — the
// stored reply, the delivered one and the live stream — and the reply
// records which message it quotes.
func TestLastReferencesAreExpanded(t *testing.T) {
	r := newRig(t, nil)
	in := func(user, text string) *store.Message {
		t.Helper()
		r.fake.Enqueue(llmtest.Reply{Text: "<empty_reply>"})
		res, err := r.mv.Turn(context.Background(), turn.Incoming{Channel: "g", Kind: turn.KindGroup, User: user, Text: text}, turn.Listener{})
		if err != nil {
			t.Fatal(err)
		}
		return res.Message
	}
	in("kemo", "first try")
	said := in("kemo", "I passed the exam!")
	in("bob", "nice")
	var live strings.Builder
	r.fake.Enqueue(llmtest.Reply{Text: "@last_kemo — congrats! @br and @last_2_kemo"})
	res, err := r.mv.Turn(context.Background(), turn.Incoming{Channel: "g", Kind: turn.KindGroup, User: "bob", Text: "say something"}, turn.Listener{
		Stream: func(e turn.StreamEvent) error {
			if e.Break {
				live.WriteString("|")
			}
			live.WriteString(e.Text)
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(replyTexts(res.Replies), "|")
	want := "「kemo: I passed the exam!」 — congrats!|and 「kemo: first try / I passed the exam!」"
	if got != want || live.String() != want {
		t.Fatalf("replies %q\nstreamed %q\nwant %q", got, live.String(), want)
	}
	if q := res.Replies[0].Quotes; len(q) != 1 || q[0] != said.ID {
		t.Fatalf("quotes = %v, want [%s]", q, said.ID)
	}
}
