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

// The workspace's tools (names and parameters are part of the prompt
// contract; the kind, effects and aim are memory's rules: remember and
// context_operation are natural tools that change the agent's memory,
// plan a process tool that does too, and workspace_usage a report that
// changes nothing, needs no answer and is offered only while the caller's
// workspace holds something).

// memoryEffects is what the workspace's changing tools do.
var memoryEffects = []string{packets.EffectMemory}

// originOf is where what a call makes comes from: its turn's channel,
// speaker and message, and the component (an observer) that made it.
func originOf(c *packets.ToolCall) Origin {
	kind := c.Caller.Kind
	if kind == "" {
		kind = "private" // packets.Private: no kind is a private conversation
	}
	return Origin{Channel: c.Caller.Channel, Speaker: c.Caller.Speaker, SpeakerID: c.Caller.SpeakerID, Kind: kind, Owner: c.Owner,
		MessageID: c.Caller.MessageID, Component: c.Component}
}

// ViewerOf is the workspace a call's turn sees: its channel, and whether
// its caller is the owner talking in private (then the owner's items from
// other conversations follow them), under its permission object.
func ViewerOf(c *packets.ToolCall) Viewer { return viewerOf(c.Reader()) }

// viewerOf is the workspace the reader r sees (packets.Reader: the one
// reader of a turn, whose Private is the one "is it private" rule).
func viewerOf(r packets.Reader) Viewer {
	return Viewer{Channel: r.Channel, Owner: r.Owner, Private: r.Private, Perm: r.Perm, Audience: r.Audience}
}

// errNotYours is a change the caller's permission does not allow.
func errNotYours(what string) error {
	return fmt.Errorf("%s is not yours to change here (the permission's self_edit); nothing was changed", what)
}

// textTool is a run function whose result is its text.
func textTool(run func(ctx context.Context, c *packets.ToolCall) (string, error)) packets.ToolFunc {
	return func(ctx context.Context, c *packets.ToolCall) (packets.Result, error) {
		out, err := run(ctx, c)
		return packets.Result{OutputText: out}, err
	}
}

// Tools returns the workspace's four tools for the registry: remember,
// context_operation and plan always; workspace_usage only while the
// caller's workspace is not empty (SPEC §2: then every answer reports its
// use).
func (m *Memory) Tools() []packets.Tool {
	return []packets.Tool{
		{ToolSpec: packets.ToolSpec{Name: "remember", Kind: packets.ToolNatural, Effects: memoryEffects, AimParam: "text", Description: "Remember something for good: a fact, a preference, a promise, a file worth keeping. Say it in natural language; the tool decides how to keep it (a new workspace item, or strengthening one you already hold).",
			Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"what to remember, in a sentence"}},"required":["text"]}`)},
			Run: textTool(m.runRemember)},
		{ToolSpec: packets.ToolSpec{Name: "context_operation", Kind: packets.ToolNatural, Effects: memoryEffects, AimParam: "text", Description: "Operate on your own workspace in natural language: list items, pin or unpin an item, forget (let go of) an item, bring one back, raise its stability, set a reference info's extra_data. Send \"help\" for the guide.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"the operation, e.g. \"pin w3\", \"forget w5\", \"raise w2 x3\", \"list\" or \"help\""}},"required":["text"]}`)},
			Run: textTool(m.runContextOperation)},
		{ToolSpec: packets.ToolSpec{Name: "plan", Kind: packets.ToolProcess, Effects: memoryEffects, Description: "Manage your plan steps: create a plan, add detail to it, mark it complete, or forget it. Plans show in the plan-steps section until they end. A plan with a time (at, or a cron schedule) waits: when it is due you are woken in this conversation and may speak first — use it for promises such as \"remind me on Friday\".",
			Parameters: json.RawMessage(`{"type":"object","properties":{"op":{"type":"string","enum":["create","complete","forget","detail"]},"text":{"type":"string","description":"the plan (create) or the detail to add (detail)"},"id":{"type":"string","description":"the plan's id, e.g. p4 (complete, forget, detail)"},"at":{"type":"string","description":"create: when the plan is due, RFC3339 with the time zone, e.g. 2026-11-27T09:00:00+08:00"},"cron":{"type":"string","description":"create: a repeating schedule instead, five cron fields (minute hour day month weekday), e.g. \"0 9 * * 1\""}},"required":["op"]}`)},
			Run: textTool(m.runPlan)},
		{ToolSpec: packets.ToolSpec{Name: "workspace_usage", Kind: packets.ToolProcess, Report: true, Effects: []string{}, // none: it only reports
			Description: "Report which workspace items your answer used, and which you may use next, in the same response as your answer (no reply is needed after it). Report with every answer while the workspace is not empty: items in use stay fresh, the rest fade. Instead of calling it you may end your answer with <workspace_usage used=\"w1,w3\" maybe=\"w2\"/>, which is removed before anyone sees it.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"used":{"type":"array","items":{"type":"string"},"description":"ids of items this answer used"},"maybe":{"type":"array","items":{"type":"string"},"description":"ids of items you may use next"}},"required":["used","maybe"]}`)},
			Run:     textTool(m.runUsage),
			Offered: func(c *packets.ToolCall) bool { return m.HasWorkspace(ViewerOf(c)) }},
	}
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

func (m *Memory) runUsage(_ context.Context, c *packets.ToolCall) (string, error) {
	var a struct {
		Used  []string `json:"used"`
		Maybe []string `json:"maybe"`
	}
	if err := decodeArgs(c.Args, &a); err != nil {
		return "", err
	}
	unknown, err := m.ReportUsage(c.Caller.MessageID, ViewerOf(c), a.Used, a.Maybe)
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

func (m *Memory) runPlan(_ context.Context, c *packets.ToolCall) (string, error) {
	var a struct {
		Op   string `json:"op"`
		Text string `json:"text"`
		ID   string `json:"id"`
		At   string `json:"at"`
		Cron string `json:"cron"`
	}
	if err := decodeArgs(c.Args, &a); err != nil {
		return "", err
	}
	if !ViewerOf(c).mayChange(originOf(c)) {
		return "", errNotYours("this conversation's plans")
	}
	switch a.Op {
	case "create":
		p, err := m.CreatePlan(a.Text, originOf(c), a.At, a.Cron)
		if err != nil {
			return "", err
		}
		if p.Deferred() {
			return "created plan " + p.ID + ", " + p.When(), nil
		}
		return "created plan " + p.ID, nil
	case "detail":
		if err := m.DetailPlan(a.ID, ViewerOf(c), a.Text); err != nil {
			return "", err
		}
		return "added detail to " + a.ID, nil
	case "complete", "forget":
		if err := m.EndPlan(a.ID, ViewerOf(c)); err != nil {
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
// when the text adds nothing the item lacks (saysTheSame: the same words
// in the same order as the item, or as one of its sentences; every word,
// letter and digit counts):
//
//   - such an item v may see (held or let go) is strengthened and brought
//     back with its history, without asking the model;
//   - otherwise the remember step sees the items that share words with the
//     text and the recent conversation, and chooses the new item's kind
//     and wording. A new item is always added, whatever the step says: its
//     "strengthen" only names the item the result shows beside the new
//     one ("kept apart from …"), and its wording is kept only when it
//     only tidies the text (keepsTheWords: no word swapped, added or
//     left out but pronouns, articles and particles, and a name the
//     conversation spoke in a pronoun's place), else the text itself is
//     kept; a file answer must name a path the text gives (pathIn);
//   - without a model, a note is added.
//
// When it strengthens instead of adding, the result quotes the item it
// kept, so the model (and a reader of the trace) sees the choice.
func (m *Memory) runRemember(ctx context.Context, c *packets.ToolCall) (string, error) {
	var a struct {
		Text string `json:"text"`
	}
	if err := decodeArgs(c.Args, &a); err != nil {
		return "", err
	}
	text := strings.TrimSpace(a.Text)
	if text == "" {
		return "", errors.New("nothing to remember: give the text")
	}
	v := ViewerOf(c)
	if !v.mayChange(originOf(c)) {
		return "", errNotYours("this conversation's memory")
	}
	if it, ok := m.sayingItem(text, v); ok {
		if _, err := m.Review([]string{it.ID}, DUsed); err != nil {
			return "", err
		}
		return fmt.Sprintf("already remembered as %s: %q; strengthened it", it.ID, it.Content), nil
	}
	kind, content := KindNote, text
	var source []string
	var apart *Item    // an item the step took for the same, which is not
	var replaces *Item // an item whose value the text changes
	var kept, summary string
	if m.natural != nil {
		conv := m.conversation(c.Caller.Channel)
		agent, _ := m.agentName().(string)
		var d struct {
			Action  string   `json:"action"`
			Kind    string   `json:"kind"`
			Content string   `json:"content"`
			Source  []string `json:"source"`
			ID      string   `json:"id"`
		}
		in := c.Natural.StepInputs(map[string]any{"text": text, "workspace": m.candidates(text, v, maxCandidates),
			"conversation": conv, "agent_name": m.agentName()})
		err := m.natural.Call(ctx, ScriptRemember, c.Caller.Channel, in, &d)
		switch {
		case err != nil:
			m.log.Warn("remember step failed; keeping a note", "err", err)
		case d.Action == "supersede":
			// A changed fact: confirmed by the words, the old item is
			// kept as what was; otherwise both are kept as they are.
			if it, ok := m.visibleCopy(d.ID, v); ok && it.Until == nil && changesTheValue(it.Content, text) {
				replaces = it
			} else if ok {
				apart = it
			}
		case d.Action == "strengthen":
			// The step's "same" is never taken on trust: the item was not
			// found saying the text above, so both are kept.
			if it, ok := m.visibleCopy(d.ID, v); ok {
				apart = it
			} else if d.ID != "" {
				m.log.Info("remember step named an item the conversation cannot see; adding a note", "id", d.ID)
			}
		default:
			w := strings.TrimSpace(d.Content)
			switch k := Kind(d.Kind); {
			case k == KindFile && pathIn(w, text):
				// A file reference names a path the text gives; the
				// text is its summary, so nothing said is lost.
				kind, content = KindFile, w
				if w != text {
					summary = text
				}
			case k == KindFile:
				if w != "" {
					kept = "the step's file reference is not a path the text gives"
				}
			default:
				if k == KindInfo {
					kind = k
				}
				if w != "" && w != text {
					if keepsTheWords(text, w, knownWords(conv, agent, c.Caller.Speaker)) {
						content = w
					} else {
						kept = "the step's rewording changed them"
					}
				}
				source = d.Source
			}
		}
	}
	it, err := m.Add(kind, content, originOf(c))
	if err != nil {
		return "", err
	}
	if kind == KindInfo && len(source) > 0 {
		_ = m.change(it.ID, func(x *Item) { x.Info.Source = source })
	}
	if summary != "" {
		_ = m.change(it.ID, func(x *Item) { x.Summary = summary })
	}
	if replaces != nil {
		if err := m.Supersede(replaces.ID, it.ID); err != nil {
			m.log.Warn("remember: keep the changed fact's history", "old", replaces.ID, "new", it.ID, "err", err)
			replaces = nil
		}
	}
	out := fmt.Sprintf("remembered as %s (%s): %s", it.ID, kind, content)
	if replaces != nil {
		out += fmt.Sprintf("; it replaces %s (%q), kept as what was until now", replaces.ID, replaces.Content)
	}
	if summary != "" {
		out += " - " + summary
	}
	if kept != "" {
		out += fmt.Sprintf(" (kept in your words: %s)", kept)
	}
	if apart != nil {
		out += fmt.Sprintf("; kept apart from %s (%q), which does not say the same words", apart.ID, apart.Content)
	}
	return out, nil
}

// maxCandidates bounds the items the remember step compares the text with.
const maxCandidates = 8

// sayingItem finds an item v may see (held or let go) that already says
// text, the oldest first.
func (m *Memory) sayingItem(text string, v Viewer) (*Item, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, it := range m.order {
		if v.sees(it.Origin) && it.Until == nil && itemSays(it, text) {
			cp := *it
			return &cp, true
		}
	}
	return nil, false
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

// pathIn reports whether path is a file path that text gives word for
// word: one word (no spaces) with a separator or a home prefix. A sentence
// that holds a path is not a path.
func pathIn(path, text string) bool {
	if path == "" || strings.IndexFunc(path, unicode.IsSpace) >= 0 || !strings.Contains(text, path) {
		return false
	}
	return strings.ContainsAny(path, "/\\") || strings.HasPrefix(path, "~")
}
