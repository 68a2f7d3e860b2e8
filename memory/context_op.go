package memory

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/cyan-agent/cyan/packets"
)

// contextGuide is what context_operation "help" returns to the model.
const contextGuide = `context_operation works on your workspace. Send one operation per line (or separate them with ";"):
  list               the items you hold, with id, kind, R (how fresh) and S (how stable)
  list all           also the items you let go of, which can come back
  pin <id>           keep an item in the workspace however long it goes unused
  unpin <id>         let a pinned item fade again
  forget <id>        let an item go now; it can come back later (restore)
  restore <id>       bring an item you let go of back, with its history
  raise <id> [xN]    multiply an item's stability S by N (default 2): it fades slower
  extra <id> <text>  set the extra_data of a reference-info item (your own note on it;
                     "extra <id> -" clears it)
  keep %[path] - what it is
                     put a file you read into the workspace as a reference, so it is not
                     forgotten at the next user message (read it again when you need its text)
  help               this guide
Items fade by R = 0.9^(turns since last use / S); report the items you use with workspace_usage and they stay fresh. Plain sentences work too ("forget the note about the exam"): they are turned into these operations.`

var opLine = regexp.MustCompile(`(?i)^\s*(list|ls|pin|unpin|forget|drop|restore|bring back|raise|strengthen|help)\b\s*(all)?\s*(\S+)?\s*(?:x|×|by)?\s*([0-9.]+)?\s*$`)

// contextOp is one parsed operation.
type contextOp struct {
	Op     string  `json:"op"`
	ID     string  `json:"id,omitempty"` // the item; for keep, the file's %[path]
	Factor float64 `json:"factor,omitempty"`
	// Summary is keep's description of the file, extra's text.
	Summary string `json:"summary,omitempty"`
}

// extraLine is "extra <id> <text>": the extra_data of a reference-info
// item.
var extraLine = regexp.MustCompile(`(?is)^\s*(?:extra|extra_data)\s+(\S+)\s+(.+?)\s*$`)

// runContextOperation is the context_operation tool: the operations of
// contextGuide, written plainly or in a sentence the context step turns into
// operations.
func (m *Memory) runContextOperation(ctx context.Context, c *packets.ToolCall) (string, error) {
	var a struct {
		Text string `json:"text"`
	}
	if err := decodeArgs(c.Args, &a); err != nil {
		return "", err
	}
	ops, ok := parseOps(a.Text)
	if !ok {
		if m.natural == nil {
			return "", fmt.Errorf("not understood: %q; send \"help\" for the operations", a.Text)
		}
		var out struct {
			Ops []contextOp `json:"ops"`
		}
		in := c.Natural.StepInputs(map[string]any{"request": a.Text, "guide": contextGuide, "workspace": m.entries(ViewerOf(c), true), "agent_name": m.agentName()})
		if err := m.natural.Call(ctx, ScriptContextOperation, c.Caller.Channel, in, &out); err != nil {
			return "", fmt.Errorf("could not interpret %q (%v); send plain operations, see \"help\"", a.Text, err)
		}
		if len(out.Ops) == 0 {
			return fmt.Sprintf("nothing done: %q matched no operation on an item you hold; send \"list all\" to see the ids, or \"help\"", a.Text), nil
		}
		ops = out.Ops
	}
	var results []string
	for _, op := range ops {
		res, err := m.applyOp(op, ViewerOf(c), originOf(c))
		if err != nil {
			res = "error: " + err.Error()
		}
		results = append(results, res)
	}
	return strings.Join(results, "\n"), nil
}

// keepLine is "keep %[path]" with an optional " - summary".
var keepLine = regexp.MustCompile(`(?i)^\s*(?:keep|pull)\s+%\[([^\]\n]+)\](?:\s+(?:-|–|—)\s*(.*?))?\s*$`)

// parseOps reads plain operations; ok is false when a line is not one.
func parseOps(text string) ([]contextOp, bool) {
	var ops []contextOp
	for _, line := range strings.FieldsFunc(text, func(r rune) bool { return r == '\n' || r == ';' }) {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if km := keepLine.FindStringSubmatch(line); km != nil {
			ops = append(ops, contextOp{Op: "keep", ID: strings.TrimSpace(km[1]), Summary: km[2]})
			continue
		}
		if em := extraLine.FindStringSubmatch(line); em != nil {
			ops = append(ops, contextOp{Op: "extra", ID: em[1], Summary: em[2]})
			continue
		}
		mm := opLine.FindStringSubmatch(line)
		if mm == nil {
			return nil, false
		}
		op := contextOp{Op: strings.ToLower(mm[1]), ID: mm[3]}
		switch op.Op {
		case "ls":
			op.Op = "list"
		case "drop":
			op.Op = "forget"
		case "bring back":
			op.Op = "restore"
		case "strengthen":
			op.Op = "raise"
		}
		if op.Op == "list" && (mm[2] != "" || strings.EqualFold(op.ID, "all")) {
			op.Op, op.ID = "list_all", ""
		}
		if mm[4] != "" {
			op.Factor, _ = strconv.ParseFloat(mm[4], 64)
		}
		needsID := op.Op != "list" && op.Op != "list_all" && op.Op != "help"
		if needsID != (op.ID != "") {
			return nil, false
		}
		ops = append(ops, op)
	}
	return ops, len(ops) > 0
}

func (m *Memory) applyOp(op contextOp, v Viewer, origin Origin) (string, error) {
	if op.Op == "keep" {
		return m.keepFile(op.ID, op.Summary, v, origin)
	}
	if op.ID != "" {
		it, ok := m.visibleCopy(op.ID, v)
		if !ok {
			return "", fmt.Errorf("no item %q in your memory", op.ID)
		}
		if !v.mayChange(it.Origin) {
			return "", errNotYours("item " + op.ID)
		}
	}
	switch op.Op {
	case "help":
		return contextGuide, nil
	case "list":
		return m.listing(v, false), nil
	case "list_all":
		return m.listing(v, true), nil
	case "pin":
		return "pinned " + op.ID, m.Pin(op.ID, true)
	case "unpin":
		return "unpinned " + op.ID, m.Pin(op.ID, false)
	case "forget":
		return "let go of " + op.ID + " (restore brings it back)", m.Let(op.ID, "the agent let it go (context_operation)")
	case "restore":
		_, err := m.Review([]string{op.ID}, DMaybe)
		return "restored " + op.ID, err
	case "raise":
		f := op.Factor
		if f == 0 {
			f = 2
		}
		return fmt.Sprintf("raised the stability of %s ×%g", op.ID, f), m.Strengthen(op.ID, f)
	case "extra":
		return m.setExtra(op.ID, op.Summary)
	}
	return "", fmt.Errorf("unknown operation %q; see help", op.Op)
}

// entry is an item as the prompt scripts read it.
type entry struct {
	ID      string  `json:"id"`
	Kind    Kind    `json:"kind"`
	State   string  `json:"state"` // held, pinned or let go
	R       float64 `json:"R"`
	S       float64 `json:"S"`
	Content string  `json:"content"`
}

// entries lists the items v may see: those held, or all of them.
func (m *Memory) entries(v Viewer, all bool) []entry {
	var out []entry
	for _, it := range m.Items(all) {
		if !v.sees(it.Origin) {
			continue
		}
		state := "held"
		switch {
		case it.Pinned:
			state = "pinned"
		case !it.InWorkspace:
			state = "let go"
		}
		out = append(out, entry{ID: it.ID, Kind: it.Kind, State: state, R: math.Round(it.R*100) / 100,
			S: math.Round(it.State.S*10) / 10, Content: it.Content})
	}
	return out
}

// listing is the workspace as context_operation lists it.
func (m *Memory) listing(v Viewer, all bool) string {
	var b strings.Builder
	for _, e := range m.entries(v, all) {
		fmt.Fprintf(&b, "%s %s R=%.2f S=%.1f %s: %s\n", e.ID, e.Kind, e.R, e.S, e.State, oneLine(e.Content))
	}
	if b.Len() == 0 {
		return "(the workspace is empty)"
	}
	return strings.TrimRight(b.String(), "\n")
}

// keepFile puts a file the agent read into the workspace as a %[path]
// item, its summary and its reference info (where it came from), so it
// outlives the next user message (SPEC §3). Keeping it again strengthens
// the item already held.
func (m *Memory) keepFile(path, summary string, v Viewer, origin Origin) (string, error) {
	path = strings.TrimSpace(path)
	if path == "" || len(path) > 1024 || strings.ContainsAny(path, "\n\r") {
		return "", fmt.Errorf("keep needs a file reference: keep %%[path] - what it is")
	}
	if !v.mayChange(origin) {
		return "", errNotYours("this conversation's memory")
	}
	m.mu.Lock()
	var held string
	for _, it := range m.order {
		if it.Kind == KindFile && it.Content == path && v.sees(it.Origin) {
			held = it.ID
		}
	}
	m.mu.Unlock()
	if held != "" {
		if _, err := m.Review([]string{held}, DUsed); err != nil {
			return "", err
		}
		if summary = strings.TrimSpace(summary); summary != "" {
			_ = m.change(held, func(x *Item) { x.Summary = summary })
		}
		return fmt.Sprintf("already keeping %%[%s] as %s; strengthened it", path, held), nil
	}
	it, err := m.Add(KindFile, path, origin)
	if err != nil {
		return "", err
	}
	summary = strings.TrimSpace(summary)
	err = m.change(it.ID, func(x *Item) {
		x.Summary = summary
		x.Info = &Info{Source: []string{"read_file %[" + path + "]"}, Current: summary}
	})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("keeping %%[%s] in the workspace as %s", path, it.ID), nil
}

// MaxExtraRunes bounds an info item's extra_data.
const MaxExtraRunes = 2000

// setExtra sets the extra_data of a reference-info item (the seed: empty
// by default, the AI may write in it to amend the reference info); "-"
// clears it.
func (m *Memory) setExtra(id, text string) (string, error) {
	text = strings.TrimSpace(text)
	if text == "-" {
		text = ""
	}
	if n := len([]rune(text)); n > MaxExtraRunes {
		return "", fmt.Errorf("extra_data of %d characters; keep it to %d", n, MaxExtraRunes)
	}
	it, err := m.Get(id)
	if err != nil {
		return "", err
	}
	if it.Kind != KindInfo {
		return "", fmt.Errorf("%s is a %s, not reference info: only reference info has extra_data", id, it.Kind)
	}
	err = m.change(id, func(x *Item) {
		if x.Info == nil {
			x.Info = &Info{Source: []string{}, Current: x.Content}
		}
		x.Info.ExtraData = text
	})
	if text == "" {
		return "cleared the extra_data of " + id, err
	}
	return fmt.Sprintf("set the extra_data of %s: %s", id, text), err
}
