package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/store"
)

// Tool is a tool the workspace offers the model: its spec (names and
// parameters are part of the prompt contract; the kind, effects and aim
// are memory's rules: remember and context_operation are natural tools
// that change the agent's memory, plan a process tool that does too, and
// workspace_usage a report that changes nothing and needs no answer) and
// how it runs.
type Tool struct {
	packets.ToolSpec
	// Run executes a call; its error is shown to the model as a failed
	// call, not a failed turn.
	Run func(ctx context.Context, c Call) (string, error)
}

// memoryEffects is what the workspace's changing tools do.
var memoryEffects = []string{packets.EffectMemory}

// Call is one tool call and the turn it belongs to.
type Call struct {
	Channel   string
	Speaker   string
	Kind      string // "private" or "group"
	Owner     bool   // the speaker is the owner
	SpeakerID string // the speaker's platform id, when known
	MessageID string // the incoming message of the turn
	// Perm is the caller's permission object: what of the memory it may see
	// and change (nil: the visibility rule alone).
	Perm      *packets.Permission
	Arguments json.RawMessage
}

func (c Call) origin() Origin {
	kind := c.Kind
	if kind == "" {
		kind = "private"
	}
	return Origin{Channel: c.Channel, Speaker: c.Speaker, SpeakerID: c.SpeakerID, Kind: kind, Owner: c.Owner, MessageID: c.MessageID}
}

// Viewer is the workspace the call's turn sees.
func (c Call) Viewer() Viewer {
	return Viewer{Channel: c.Channel, Owner: c.Owner, Private: c.Kind == "" || c.Kind == "private", Perm: c.Perm}
}

// errNotYours is a change the caller's permission does not allow.
func errNotYours(what string) error {
	return fmt.Errorf("%s is not yours to change here (the permission's self_edit); nothing was changed", what)
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
		{ToolSpec: packets.ToolSpec{Name: "remember", Kind: packets.ToolNatural, Effects: memoryEffects, AimParam: "text", Description: "Remember something for good: a fact, a preference, a promise, a file worth keeping. Say it in natural language; the tool decides how to keep it (a new workspace item, or strengthening one you already hold).",
			Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"what to remember, in a sentence"}},"required":["text"]}`)},
			Run: m.runRemember},
		{ToolSpec: packets.ToolSpec{Name: "context_operation", Kind: packets.ToolNatural, Effects: memoryEffects, AimParam: "text", Description: "Operate on your own workspace in natural language: list items, pin or unpin an item, forget (let go of) an item, bring one back, raise its stability. Send \"help\" for the guide.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"the operation, e.g. \"pin w3\", \"forget w5\", \"raise w2 x3\", \"list\" or \"help\""}},"required":["text"]}`)},
			Run: m.runContextOperation},
		{ToolSpec: packets.ToolSpec{Name: "plan", Kind: packets.ToolProcess, Effects: memoryEffects, Description: "Manage your plan steps: create a plan, add detail to it, mark it complete, or forget it. Plans show in the plan-steps section until they end. A plan with a time (at, or a cron schedule) waits: when it is due you are woken in this conversation and may speak first — use it for promises such as \"remind me on Friday\".",
			Parameters: json.RawMessage(`{"type":"object","properties":{"op":{"type":"string","enum":["create","complete","forget","detail"]},"text":{"type":"string","description":"the plan (create) or the detail to add (detail)"},"id":{"type":"string","description":"the plan's id, e.g. p4 (complete, forget, detail)"},"at":{"type":"string","description":"create: when the plan is due, RFC3339 with the time zone, e.g. 2026-11-27T09:00:00+08:00"},"cron":{"type":"string","description":"create: a repeating schedule instead, five cron fields (minute hour day month weekday), e.g. \"0 9 * * 1\""}},"required":["op"]}`)},
			Run: m.runPlan},
	}
	if withUsage {
		tools = append(tools, Tool{ToolSpec: packets.ToolSpec{Name: "workspace_usage", Kind: packets.ToolProcess, Report: true,
			Description: "Report which workspace items your answer used, and which you may use next, in the same response as your answer (no reply is needed after it). Report with every answer while the workspace is not empty: items in use stay fresh, the rest fade. Instead of calling it you may end your answer with <workspace_usage used=\"w1,w3\" maybe=\"w2\"/>, which is removed before anyone sees it.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"used":{"type":"array","items":{"type":"string"},"description":"ids of items this answer used"},"maybe":{"type":"array","items":{"type":"string"},"description":"ids of items you may use next"}},"required":["used","maybe"]}`)},
			Run: m.runUsage})
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
	if !c.Viewer().mayChange(c.origin()) {
		return "", errNotYours("this conversation's plans")
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

// runRemember is the remember tool. Nothing the agent is told to remember
// may be lost, so an item is strengthened instead of a new one added only
// when it says the same thing:
//
//   - an item v may see (held or let go) whose words are the same as the
//     text's (the same terms, numbers included) is strengthened and brought
//     back with its history;
//   - otherwise the remember step sees the items that share words with the
//     text and the recent conversation, and decides: add an item (of the
//     kind it chooses), or strengthen one it names. Its "same" is checked:
//     when the text carries a number, or many words, that the named item
//     lacks ("carol's number is 555-1234" against "bob's number is
//     555-0000"), both are kept;
//   - without a model, a note is added.
//
// When it strengthens instead of adding, the result quotes the item it
// kept, so the model (and a reader of the trace) sees the choice.
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
	v := c.Viewer()
	if !v.mayChange(c.origin()) {
		return "", errNotYours("this conversation's memory")
	}
	if it, ok := m.sameWords(text, v); ok {
		if _, err := m.Review([]string{it.ID}, DUsed); err != nil {
			return "", err
		}
		return fmt.Sprintf("already remembered as %s: %q; strengthened it", it.ID, it.Content), nil
	}
	kind, content := KindNote, text
	var source []string
	var apart *Item // an item the step took for the same, which is not
	if m.natural != nil {
		var d struct {
			Action  string   `json:"action"`
			Kind    string   `json:"kind"`
			Content string   `json:"content"`
			Source  []string `json:"source"`
			ID      string   `json:"id"`
		}
		in := map[string]any{"text": text, "workspace": m.candidates(text, v, maxCandidates),
			"conversation": m.conversation(c.Channel), "agent_name": m.agentName()}
		err := m.natural.Call(ctx, ScriptRemember, c.Channel, in, &d)
		switch {
		case err != nil:
			m.log.Warn("remember step failed; keeping a note", "err", err)
		case d.Action == "strengthen" && d.ID != "":
			it, ok := m.visibleCopy(d.ID, v)
			switch {
			case !ok:
				m.log.Info("remember step named an item the conversation cannot see; adding a note", "id", d.ID)
			case !says(it.Content+" "+it.Summary, text):
				apart = it
			default:
				if _, err := m.Review([]string{it.ID}, DUsed); err != nil {
					return "", err
				}
				return fmt.Sprintf("already remembered as %s: %q; strengthened it instead of adding a new item (if that is a different fact, call remember again saying how it differs)", it.ID, it.Content), nil
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
	out := fmt.Sprintf("remembered as %s (%s): %s", it.ID, kind, content)
	if apart != nil {
		out += fmt.Sprintf("; kept apart from %s (%q), which says something else", apart.ID, apart.Content)
	}
	return out, nil
}

// maxCandidates bounds the items the remember step compares the text with.
const maxCandidates = 8

// sameWords finds an item v may see whose terms are exactly the text's.
func (m *Memory) sameWords(text string, v Viewer) (*Item, bool) {
	want := terms(text)
	if len(want) == 0 {
		return nil, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, it := range m.order {
		if v.sees(it.Origin) && sameTerms(want, terms(it.Content)) {
			cp := *it
			return &cp, true
		}
	}
	return nil, false
}

func sameTerms(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for t := range a {
		if !b[t] {
			return false
		}
	}
	return true
}

// says reports whether held can stand for text: every number of text is in
// held, and at most half of text's other terms are missing from it.
func says(held, text string) bool {
	have, want := terms(held), terms(text)
	missing := 0
	for t := range want {
		if have[t] {
			continue
		}
		if strings.ContainsFunc(t, unicode.IsDigit) {
			return false
		}
		missing++
	}
	return 2*missing <= len(want)
}

// candidate is an item the remember step compares the text with.
type candidate struct {
	ID      string `json:"id"`
	Kind    Kind   `json:"kind"`
	Content string `json:"content"`
}

// candidates lists the items v may see (held or let go) that share the
// most terms with text, at most n, the closest first.
func (m *Memory) candidates(text string, v Viewer, n int) []candidate {
	want := terms(text)
	type scored struct {
		c   candidate
		hit int
	}
	var list []scored
	m.mu.Lock()
	for _, it := range m.order {
		if !v.sees(it.Origin) {
			continue
		}
		hit := 0
		for t := range terms(it.Content + " " + it.Summary) {
			if want[t] {
				hit++
			}
		}
		if hit > 0 {
			list = append(list, scored{candidate{ID: it.ID, Kind: it.Kind, Content: it.Content}, hit})
		}
	}
	m.mu.Unlock()
	slices.SortStableFunc(list, func(a, b scored) int { return b.hit - a.hit })
	var out []candidate // nil when none: the step then gets no listing
	for i := 0; i < len(list) && i < n; i++ {
		out = append(out, list[i].c)
	}
	return out
}

// conversation is the channel's recent lines, for the remember step ("the
// tool can freely access the caller's context"): who said what, newest
// last.
func (m *Memory) conversation(channel string) string {
	if m.st == nil || channel == "" {
		return ""
	}
	recent, err := m.st.Recent(channel, store.Window{Limit: 12, MaxScan: 64, Keep: func(x *store.Message) bool {
		return x.Text != "" && (x.Role == store.RoleUser || x.Role == store.RoleAssistant) && !x.IsRecalled()
	}})
	if err != nil {
		m.log.Warn("remember: read the conversation", "channel", channel, "err", err)
		return ""
	}
	var b strings.Builder
	for _, x := range recent {
		fmt.Fprintf(&b, "%s: %s\n", x.User, oneLine(x.Text))
	}
	return strings.TrimRight(b.String(), "\n")
}

// visibleCopy returns a copy of the item id when v may see it.
func (m *Memory) visibleCopy(id string, v Viewer) (*Item, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	it, ok := m.items[strings.TrimSpace(id)]
	if !ok || !v.sees(it.Origin) {
		return nil, false
	}
	cp := *it
	return &cp, true
}
