package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Tool is a tool the workspace offers the model. Names and parameters are
// part of the prompt contract.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage
	// Run executes a call; its error is shown to the model as a failed
	// call, not a failed turn.
	Run func(ctx context.Context, c Call) (string, error)
}

// Call is one tool call and the turn it belongs to.
type Call struct {
	Channel   string
	Speaker   string
	Kind      string // "private" or "group"
	Owner     bool   // the speaker is the owner
	MessageID string // the incoming message of the turn
	Arguments json.RawMessage
}

func (c Call) origin() Origin {
	kind := c.Kind
	if kind == "" {
		kind = "private"
	}
	return Origin{Channel: c.Channel, Speaker: c.Speaker, Kind: kind, Owner: c.Owner, MessageID: c.MessageID}
}

// Viewer is the workspace the call's turn sees.
func (c Call) Viewer() Viewer {
	return Viewer{Channel: c.Channel, Owner: c.Owner, Private: c.Kind == "" || c.Kind == "private"}
}

// AllTools returns the four tools, whatever the workspace holds (for a
// registry that decides per turn which to offer).
func (m *Memory) AllTools() []Tool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.toolList(true)
}

// Tools returns the workspace's tools for a turn that sees v: remember,
// context_operation and plan always; workspace_usage only when that
// workspace is not empty (SPEC §2: then every answer reports its use).
func (m *Memory) Tools(v Viewer) []Tool {
	held := m.HasWorkspace(v)
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.toolList(held)
}

func (m *Memory) toolList(withUsage bool) []Tool {
	tools := []Tool{
		{Name: "remember", Description: "Remember something for good: a fact, a preference, a promise, a file worth keeping. Say it in natural language; the tool decides how to keep it (a new workspace item, or strengthening one you already hold).",
			Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"what to remember, in a sentence"}},"required":["text"]}`),
			Run:        m.runRemember},
		{Name: "context_operation", Description: "Operate on your own workspace in natural language: list items, pin or unpin an item, forget (let go of) an item, bring one back, raise its stability. Send \"help\" for the guide.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"the operation, e.g. \"pin w3\", \"forget w5\", \"raise w2 x3\", \"list\" or \"help\""}},"required":["text"]}`),
			Run:        m.runContextOperation},
		{Name: "plan", Description: "Manage your plan steps: create a plan, add detail to it, mark it complete, or forget it. Plans show in the plan-steps section until they end. A plan with a time (at, or a cron schedule) waits: when it is due you are woken in this conversation and may speak first — use it for promises such as \"remind me on Friday\".",
			Parameters: json.RawMessage(`{"type":"object","properties":{"op":{"type":"string","enum":["create","complete","forget","detail"]},"text":{"type":"string","description":"the plan (create) or the detail to add (detail)"},"id":{"type":"string","description":"the plan's id, e.g. p4 (complete, forget, detail)"},"at":{"type":"string","description":"create: when the plan is due, RFC3339 with the time zone, e.g. 2026-11-27T09:00:00+08:00"},"cron":{"type":"string","description":"create: a repeating schedule instead, five cron fields (minute hour day month weekday), e.g. \"0 9 * * 1\""}},"required":["op"]}`),
			Run:        m.runPlan},
	}
	if withUsage {
		tools = append(tools, Tool{Name: "workspace_usage",
			Description: "Report which workspace items your answer used, and which you may use next. Call it with every answer while the workspace is not empty: items in use stay fresh, the rest fade.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"used":{"type":"array","items":{"type":"string"},"description":"ids of items this answer used"},"maybe":{"type":"array","items":{"type":"string"},"description":"ids of items you may use next"}},"required":["used","maybe"]}`),
			Run:         m.runUsage})
	}
	return tools
}

func decodeArgs(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("the arguments are not the JSON object this tool takes: %v", err)
	}
	return nil
}

func (m *Memory) runUsage(_ context.Context, c Call) (string, error) {
	var a struct {
		Used  []string `json:"used"`
		Maybe []string `json:"maybe"`
	}
	if err := decodeArgs(c.Arguments, &a); err != nil {
		return "", err
	}
	unknown, err := m.ReportUsage(c.MessageID, c.Viewer(), a.Used, a.Maybe)
	if err != nil {
		return "", err
	}
	out := fmt.Sprintf("noted: used %v, maybe %v", nonNil(a.Used), nonNil(a.Maybe))
	if len(unknown) > 0 {
		out += fmt.Sprintf("; not in your workspace: %v", unknown)
	}
	return out, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (m *Memory) runPlan(_ context.Context, c Call) (string, error) {
	var a struct {
		Op   string `json:"op"`
		Text string `json:"text"`
		ID   string `json:"id"`
		At   string `json:"at"`
		Cron string `json:"cron"`
	}
	if err := decodeArgs(c.Arguments, &a); err != nil {
		return "", err
	}
	switch a.Op {
	case "create":
		p, err := m.CreatePlan(a.Text, c.origin(), a.At, a.Cron)
		if err != nil {
			return "", err
		}
		if p.Deferred() {
			return "created plan " + p.ID + ", " + p.When(), nil
		}
		return "created plan " + p.ID, nil
	case "detail":
		if err := m.DetailPlan(a.ID, c.Viewer(), a.Text); err != nil {
			return "", err
		}
		return "added detail to " + a.ID, nil
	case "complete", "forget":
		if err := m.EndPlan(a.ID, c.Viewer()); err != nil {
			return "", err
		}
		if a.Op == "complete" {
			return "plan " + a.ID + " is complete", nil
		}
		return "forgot plan " + a.ID, nil
	}
	return "", fmt.Errorf("op %q is not one of create, complete, forget, detail", a.Op)
}

// runRemember is the remember tool. An item that already says the same
// thing (held or let go) is strengthened and brought back with its history;
// otherwise the remember step decides the kind, and without a model a note
// is added.
func (m *Memory) runRemember(ctx context.Context, c Call) (string, error) {
	var a struct {
		Text string `json:"text"`
	}
	if err := decodeArgs(c.Arguments, &a); err != nil {
		return "", err
	}
	text := strings.TrimSpace(a.Text)
	if text == "" {
		return "", errors.New("nothing to remember: give the text")
	}
	if id := m.similar(text, c.Viewer()); id != "" {
		if _, err := m.Review([]string{id}, DUsed); err != nil {
			return "", err
		}
		return fmt.Sprintf("already remembered as %s; strengthened it", id), nil
	}
	kind, content := KindNote, text
	var source []string
	if m.natural != nil {
		var d struct {
			Action  string   `json:"action"`
			Kind    string   `json:"kind"`
			Content string   `json:"content"`
			Source  []string `json:"source"`
			ID      string   `json:"id"`
		}
		in := map[string]any{"text": text, "workspace": m.entries(c.Viewer(), false), "agent_name": m.agentName()}
		err := m.natural.Call(ctx, ScriptRemember, c.Channel, in, &d)
		switch {
		case err != nil:
			m.log.Warn("remember step failed; keeping a note", "err", err)
		case d.Action == "strengthen" && d.ID != "":
			if it, ok := m.visibleItem(d.ID, c.Viewer()); ok {
				if _, err := m.Review([]string{it}, DUsed); err != nil {
					return "", err
				}
				return fmt.Sprintf("strengthened %s", it), nil
			}
		default:
			if d.Content != "" {
				content = d.Content
			}
			if k := Kind(d.Kind); k == KindFile || k == KindInfo {
				kind = k
			}
			source = d.Source
		}
	}
	it, err := m.Add(kind, content, c.origin())
	if err != nil {
		return "", err
	}
	if kind == KindInfo && len(source) > 0 {
		_ = m.change(it.ID, func(x *Item) { x.Info.Source = source })
	}
	return fmt.Sprintf("remembered as %s (%s): %s", it.ID, kind, content), nil
}

// similar finds an item v may see (in the workspace or let go) that
// says the same thing as text.
func (m *Memory) similar(text string, v Viewer) string {
	want := terms(text)
	if len(want) == 0 {
		return ""
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	best, bestScore := "", 0.0
	for _, it := range m.items {
		if !v.sees(it.Origin) {
			continue
		}
		have := terms(it.Content)
		if len(have) == 0 {
			continue
		}
		hit := 0
		for t := range want {
			if have[t] {
				hit++
			}
		}
		// Both ways: the texts must cover each other.
		score := min(float64(hit)/float64(len(want)), float64(hit)/float64(len(have)))
		if score > bestScore {
			best, bestScore = it.ID, score
		}
	}
	if bestScore >= 0.8 {
		return best
	}
	return ""
}

func (m *Memory) visibleItem(id string, v Viewer) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	it, ok := m.items[strings.TrimSpace(id)]
	if !ok || !v.sees(it.Origin) {
		return "", false
	}
	return it.ID, true
}
