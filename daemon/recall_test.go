package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/clocktest"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/events"
	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/internal/scripttest"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/memory"
	"github.com/cyan-agent/cyan/recall"
)

// gardenModel answers every step's script by its response format, makes
// the agent remember what alice grows, and recall it when she asks.
func gardenModel(req llmtest.Request) llmtest.Reply {
	switch scripttest.FormatName(req) {
	case events.ScriptTitle:
		return llmtest.Reply{Text: `{"title":"alice told me her tomatoes are ripe","importance":0.5,"includes":[]}`}
	case events.ScriptExtract:
		return llmtest.Reply{Text: `{"facts":[],"lines":[],"reinforce":[],"contradict":[]}`}
	case events.ScriptSummary:
		return llmtest.Reply{Text: `{"title":"a day of garden talk","importance":0.3}`}
	case memory.ScriptRemember:
		return llmtest.Reply{Text: `{"action":"add","kind":"note","content":"alice grows tomatoes on her balcony"}`}
	case recall.ScriptFilter:
		return llmtest.Reply{Text: `{"keep":[1,2,3,4,5,6,7,8],"give_up":false}`}
	case recall.ScriptSummary:
		return llmtest.Reply{Text: `{"summarized_info":"alice said her tomatoes were ripe"}`}
	}
	last := req.Messages[len(req.Messages)-1]
	switch {
	case last.Role == llm.RoleTool:
		return llmtest.Reply{Text: "noted"}
	case strings.Contains(last.Content, "ripe"):
		return llmtest.Reply{Text: "lovely!", ToolCalls: []llm.ToolCall{{ID: "r1", Name: "remember", Arguments: `{"text":"alice grows tomatoes on her balcony"}`}}}
	case strings.Contains(last.Content, "remember my tomatoes"):
		return llmtest.Reply{Text: "let me think", ToolCalls: []llm.ToolCall{{ID: "r2", Name: "recall", Arguments: `{"prompt":"alice ripe tomatoes"}`}}}
	}
	return llmtest.Reply{Text: "hi"}
}

// TestARecallHitReviewsTheItemAndTheEventItCovers drives two turns through
// the daemon's own API, agent and tools: in the first the agent remembers
// a note; the topic closes into an event; ten days and turns later a
// recall hits the message the note came from and the event. Both grow
// their stability by SPEC §3's review with D = 0.7, and the passages are
// in the workspace's pulled-info area.
func TestARecallHitReviewsTheItemAndTheEventItCovers(t *testing.T) {
	fake := &llmtest.Server{Default: gardenModel}
	llmSrv := httptest.NewServer(fake)
	defer llmSrv.Close()
	dir := t.TempDir()
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"CYAN_DATA_DIR": filepath.Join(dir, "data"), "CYAN_ADDR": "127.0.0.1:0",
			"CYAN_LLM_BASE_URL": llmSrv.URL + "/v1", "CYAN_LLM_MODEL": "fake-model"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Memory.EvictBelow = 0 // keep the note in the workspace: this test is about reviews
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	clk := clocktest.New(t0)
	d, err := New(Options{Config: cfg, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer d.store.Close()
	defer d.tools.paths.Close()
	srv := httptest.NewServer(d.api)
	defer srv.Close()
	ctx := context.Background()
	say := func(text string) {
		t.Helper()
		body, _ := json.Marshal(map[string]string{"channel": "garden", "user": "alice", "text": text})
		resp, err := http.Post(srv.URL+"/api/v1/messages", "application/json", bytes.NewReader(body))
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("post %q: %v %v", text, resp, err)
		}
		resp.Body.Close()
	}

	say("my tomatoes are ripe!")
	items := d.mem.Items(false)
	if len(items) != 1 || items[0].Origin.MessageID == "" {
		t.Fatalf("workspace after remember: %+v", items)
	}
	// The topic closes after its silence and is titled.
	clk.Set(t0.Add(2 * time.Hour))
	if _, err := d.events.Process(ctx, clk.Now(), events.ProcessOptions{}); err != nil {
		t.Fatal(err)
	}
	// Ten days and ten answered turns later, both have faded.
	for range 10 {
		if _, err := d.mem.AfterTurn(ctx, memory.TurnDone{Channel: "garden"}); err != nil {
			t.Fatal(err)
		}
	}
	clk.Set(t0.Add(10 * 24 * time.Hour))
	if err := d.recall.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if st := d.recall.Status(); st.Records != 1 {
		t.Fatalf("recall indexes %d records, want the topic's", st.Records)
	}
	item, _ := d.mem.Get(items[0].ID)
	evs, err := d.events.Events(events.Filter{Channel: "garden", Level: events.LevelEvent}, clk.Now())
	if err != nil || len(evs) != 1 || evs[0].Title == "" {
		t.Fatalf("events: %+v %v", evs, err)
	}
	ev := evs[0]

	say("do you remember my tomatoes?")

	gotItem, _ := d.mem.Get(item.ID)
	wantS := item.State.S * (1 + item.State.A*math.Exp(-memory.DMaybe)*(1-item.R))
	if math.Abs(gotItem.State.S-wantS) > 1e-9 || gotItem.State.D != memory.DMaybe || item.R >= 1 {
		t.Fatalf("item S %g (R %g) → %g, want %g", item.State.S, item.R, gotItem.State.S, wantS)
	}
	gotEv, err := d.events.Event(ev.ID, clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	r := ev.MemoryState.Retrievability(clk.Now())
	wantEvS := ev.MemoryState.S * (1 + events.Gain*math.Exp(-memory.DMaybe)*(1-r))
	if math.Abs(gotEv.MemoryState.S-wantEvS) > 1e-9 || !gotEv.MemoryState.LastT.Equal(clk.Now()) || r >= 1 {
		t.Fatalf("event S %g (R %g) → %+v, want S %g", ev.MemoryState.S, r, gotEv.MemoryState, wantEvS)
	}
	// The passage and the event record are in the channel's pulled-info
	// area, the record under its label.
	refs := map[string]bool{}
	for _, p := range d.mem.PulledArea("garden") {
		refs[p.Ref] = true
	}
	if !refs["history/garden/2026-03-01"] || !refs["event "+ev.Label] {
		t.Fatalf("pulled area: %v", d.mem.PulledArea("garden"))
	}
	if len(d.mem.PulledArea("home")) != 0 {
		t.Fatal("another channel got the pulled passages")
	}
}
