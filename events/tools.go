package events

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/packets"
)

// textTool is a run function whose result is its text: the call's turn
// as the registry resolved it (its channel, and its caller as the
// knowledge it may see and change, packets.Scope: the theory tool lists,
// reads and writes only what that allows, the event tool closes a topic
// only where it may), at the log's time.
func (l *Log) textTool(run func(c *packets.ToolCall, r packets.Reader, now time.Time) (string, error)) packets.ToolFunc {
	return func(_ context.Context, c *packets.ToolCall) (packets.Result, error) {
		out, err := run(c, c.Reader(), l.now())
		return packets.Result{OutputText: out}, err
	}
}

// recordEffects is what the event and theory tools do: change the agent's
// own memory.
var recordEffects = []string{packets.EffectMemory}

// Tools returns the `event` and `theory` tools, for the registry: both are
// process tools that change only the agent's own record.
func (l *Log) Tools() []packets.Tool {
	return []packets.Tool{
		{ToolSpec: packets.ToolSpec{
			Name: "event", Kind: packets.ToolProcess, Effects: recordEffects,
			Description: "Mark the current matter done: {\"op\": \"close\"} closes the conversation's current topic now " +
				"and writes it to your event log (a topic also closes by itself after a silence). " +
				"Give \"title\" to record it under your own words.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"op":{"type":"string","enum":["close"]},"title":{"type":"string","description":"a one-sentence record of the matter, in the first person"}},"required":["op"],"additionalProperties":false}`)},
			Run: l.textTool(l.runEventTool),
		},
		{ToolSpec: packets.ToolSpec{
			Name: "theory", Kind: packets.ToolProcess, Effects: recordEffects,
			Description: "Keep theory packets: articles on a system of ideas with what they were drawn from. " +
				"op create {title, article, related_info}; op update {id, article, title?, related_info?} replaces the article " +
				"(only the current version is kept, so write the whole new version; related_info lists what it drew on: " +
				"{kind: message|theory_line|file, ref: message id | \"theory-id:line\" | path}); op get {id}; op list.",
			Parameters: json.RawMessage(`{"type":"object","properties":{` +
				`"op":{"type":"string","enum":["create","update","get","list"]},"id":{"type":"string"},"title":{"type":"string"},"article":{"type":"string"},` +
				`"related_info":{"type":"array","items":{"type":"object","properties":{"kind":{"type":"string","enum":["message","theory_line","file"]},"ref":{"type":"string"}},"required":["kind","ref"],"additionalProperties":false}}},` +
				`"required":["op"],"additionalProperties":false}`)},
			Run: l.textTool(l.runTheoryTool),
		},
	}
}

// decodeArgs reads a model's arguments strictly, so a misspelt field is
// reported instead of ignored.
func decodeArgs(args json.RawMessage, v any) error {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: the arguments are not valid: %v", ErrInvalid, err)
	}
	return nil
}

func (l *Log) runEventTool(c *packets.ToolCall, r packets.Reader, now time.Time) (string, error) {
	var a struct {
		Op    string `json:"op"`
		Title string `json:"title"`
	}
	if err := decodeArgs(c.Args, &a); err != nil {
		return "", err
	}
	if a.Op != "close" {
		return "", fmt.Errorf("%w: op %q is unknown; the event tool has one op: close", ErrInvalid, a.Op)
	}
	if !r.MayWrite(packets.InfoEvents, packets.Scope{Channel: r.Channel}) {
		return "", fmt.Errorf("%w: closing this conversation's topic is not yours to do here (the permission's self_edit)", ErrDenied)
	}
	e, err := l.CloseTopic(r.Channel, cleanText(a.Title, maxTitleRunes), now)
	if err != nil {
		return "", err
	}
	if e == nil {
		return "there is no open topic to close in this conversation", nil
	}
	what := "it will be titled shortly"
	if e.Title != "" {
		what = fmt.Sprintf("recorded as %q", e.Title)
	}
	label := l.cal.label(LevelEvent, e.Start)
	return fmt.Sprintf("closed the topic that began %s (%d messages) as the event %%[%s%s]; %s", label, e.Messages, RefEvent, label, what), nil
}

func (l *Log) runTheoryTool(c *packets.ToolCall, r packets.Reader, now time.Time) (string, error) {
	var a struct {
		Op          string    `json:"op"`
		ID          string    `json:"id"`
		Title       string    `json:"title"`
		Article     string    `json:"article"`
		RelatedInfo []Related `json:"related_info"`
	}
	if err := decodeArgs(c.Args, &a); err != nil {
		return "", err
	}
	switch a.Op {
	case "create":
		// The owner's theories are the owner's knowledge, wherever written;
		// anyone else's would belong to their conversation.
		s := packets.Scope{Channel: r.Channel}
		if r.Owner {
			s = packets.Scope{Owner: true}
		}
		if !r.MayWrite(packets.InfoTheories, s) {
			return "", fmt.Errorf("%w: theories are not yours to create here (the permission's self_edit); nothing was written", ErrDenied)
		}
		t, err := l.CreateTheory(a.Title, a.Article, a.RelatedInfo, s, now)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("created theory %s %q (version 1)", t.ID, t.Title), nil
	case "update":
		if a.ID == "" {
			return "", fmt.Errorf("%w: update needs the theory's id", ErrInvalid)
		}
		cur, err := l.visibleTheory(a.ID, r)
		if err != nil {
			return "", err
		}
		if !r.MayWrite(packets.InfoTheories, cur.ScopeOf()) {
			return "", fmt.Errorf("%w: theory %s is not yours to change here (the permission's self_edit); it is unchanged", ErrDenied, a.ID)
		}
		t, err := l.UpdateTheory(a.ID, a.Title, a.Article, a.RelatedInfo, now)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("updated theory %s %q to version %d; the previous article is gone, this one is current", t.ID, t.Title, t.Version), nil
	case "get":
		t, err := l.visibleTheory(a.ID, r)
		if err != nil {
			return "", err
		}
		b, _ := json.Marshal(t)
		return string(b), nil
	case "list":
		all, err := l.Theories()
		if err != nil {
			return "", err
		}
		var ts []*Theory
		for _, t := range all {
			if r.MayRead(packets.InfoTheories, t.ScopeOf()) {
				ts = append(ts, t)
			}
		}
		if len(ts) == 0 {
			return "there are no theories yet", nil
		}
		var b strings.Builder
		for _, t := range ts {
			fmt.Fprintf(&b, "%s %q (version %d, %d sources)\n", t.ID, t.Title, t.Version, len(t.RelatedInfo))
		}
		return strings.TrimRight(b.String(), "\n"), nil
	}
	return "", fmt.Errorf("%w: op %q is unknown; use create, update, get or list", ErrInvalid, a.Op)
}

// visibleTheory returns theory id when r may see it; one it may not is
// reported as missing, so its existence does not leak; one r may see and
// its audience may not (the owner's, asked for in a group) is withheld
// until the owner confirms the call (packets.Reader.Withheld).
func (l *Log) visibleTheory(id string, r packets.Reader) (*Theory, error) {
	t, err := l.Theory(id)
	if err != nil {
		return nil, err
	}
	switch r.Sees(packets.InfoTheories, t.ScopeOf()) {
	case packets.Deny:
		return nil, fmt.Errorf("events: theory %q: %w (list them with the theory tool's list op)", id, ErrNotFound)
	case packets.Confirm:
		return nil, r.Withheld("theory " + id)
	}
	return t, nil
}
