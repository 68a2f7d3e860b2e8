package packets

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
)

// This file is the one tool convention: every part that gives the model a
// tool (tools' files and terminal, memory's workspace, the event log,
// recall, …) exports it as a Tool — a ToolSpec and a ToolFunc that takes a
// *ToolCall — and the registry (package tools) takes them from each part
// in one loop, runs every call through the permission checks and hands
// the run function the caller it resolved.

// ToolKind tells how a tool takes its request (SPEC §5).
type ToolKind string

const (
	// ToolProcess tools take an action packet (plain parameters) and use
	// no LLM.
	ToolProcess ToolKind = "process"
	// ToolNatural tools take a natural packet and think with a model.
	ToolNatural ToolKind = "natural"
)

// Effects say what a tool can do to the world; the default permission
// objects are drawn from them (package tools).
const (
	EffectRead     = "read"      // reads the owner's files or machine
	EffectWrite    = "write"     // changes files
	EffectExecute  = "execute"   // runs programs
	EffectNetwork  = "network"   // reaches the network
	EffectOperate  = "operate"   // plans operations on the computer
	EffectSelfEdit = "self_edit" // changes the agent itself
	EffectMemory   = "memory"    // changes the agent's own memory
)

// ToolSpec describes a tool to the model and to the permission checks:
// what the model is offered, and the rules the registry needs — its kind,
// its effects, the parameter that becomes a natural packet's aim.
type ToolSpec struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description"`
	// Parameters is a JSON Schema object; nil means no parameters.
	Parameters json.RawMessage `json:"parameters,omitempty"`
	Kind       ToolKind        `json:"kind"`
	// Effects are what the tool can do (the Effect constants); every tool
	// declares them — an empty list, not nil, for one that does none
	// (speak) — and the registry refuses a tool that does not.
	Effects []string `json:"effects"`
	// AI marks a tool that runs a model: AI tools run one at a time.
	AI bool `json:"ai,omitempty"`
	// Source is where the tool comes from, as `cyan tool ls` shows it
	// (the registry sets it: "builtin" unless a source says otherwise).
	Source string `json:"source"`
	// PathParams name the parameters holding file paths: permission rules
	// see their values cleaned ("%[a/../b]" as "b").
	PathParams []string `json:"-"`
	// CommandParams name the parameters holding shell commands: rules see
	// each part of a compound command.
	CommandParams []string `json:"-"`
	// AimParam names the parameter that becomes a natural packet's aim when
	// the model calls a natural tool with plain parameters ("text").
	AimParam string `json:"-"`
	// Report marks a tool whose call only reports something to the
	// platform (workspace_usage): its result needs no answer from the
	// model, so a turn whose calls are all reports makes no further model
	// request, and the result is not shown in later prompts.
	Report bool `json:"report,omitempty"`
	// Transient marks a tool whose results are contents the agent opened
	// (open): like a file read (EffectRead), they are shown until the next
	// user message, then forgotten unless the agent put them into its
	// workspace (SPEC §3).
	Transient bool `json:"transient,omitempty"`
}

// TransientResults reports whether the tool's results are shown only until
// the next user message: it says so, or it reads files (EffectRead).
func (s ToolSpec) TransientResults() bool {
	return s.Transient || slices.Contains(s.Effects, EffectRead)
}

// ToolFunc runs one call. Its error is shown to the model as the tool's
// failure (not the turn's), so it says what to change.
type ToolFunc func(ctx context.Context, c *ToolCall) (Result, error)

// Tool is a spec and the function that runs it: what a part exports.
type Tool struct {
	ToolSpec
	Run ToolFunc
	// Offered, if set, says whether the tool is offered to a caller at
	// all (workspace_usage only while the caller's workspace holds
	// something); nil: whenever the caller's permission allows it.
	Offered func(c *ToolCall) bool
}

// Caller is who a call runs for, as the caller says: the turn's channel
// and speaker. (It is stored with a parked call: its JSON is kept.)
type Caller struct {
	Channel   string `json:"channel,omitempty"`
	Speaker   string `json:"speaker,omitempty"`
	SpeakerID string `json:"speaker_id,omitempty"`
	Kind      string `json:"kind,omitempty"` // "private" or "group"
	// Owner is set by trusted local callers (the command line of the
	// owner); otherwise ownership comes from permissions.owners.
	Owner bool `json:"owner,omitempty"`
	// Process is the calling process ("main-virtual" when empty). A
	// component registered with its own permission object (an observer)
	// calls with that one.
	Process string `json:"process,omitempty"`
	// CallID is the model's id of the call, kept for the result message.
	CallID string `json:"call_id,omitempty"`
	// MessageID is the incoming message of the turn that made the call.
	MessageID string `json:"message_id,omitempty"`
}

// ToolCall is one call as a tool's run function sees it: what the model
// asked and who asked, as the registry resolved it (its Reader).
type ToolCall struct {
	Tool string
	Args json.RawMessage // a JSON object
	// Caller is the caller as it came.
	Caller Caller
	// Owner is set when the caller is the owner (permissions.owners, or a
	// trusted local caller).
	Owner bool
	// Perm is the caller's permission object: its component's own, else
	// the owner's or everyone else's.
	Perm *Permission
	// Component is the calling process when it has a permission object of
	// its own (an observer); "" for main-virtual and everyone else.
	Component string
	// Audience is the permission of those who will read the call's result
	// besides the caller (Reader.Audience; nil: the caller alone).
	Audience *Permission
	// Natural is the request as a natural packet (natural tools only).
	Natural *Natural
	// Confirmed is set when the owner approved this call.
	Confirmed bool
}

// Private reports whether the call comes from a private conversation (or
// from no conversation at all): the one rule, Private.
func (c *ToolCall) Private() bool { return Private(c.Caller.Kind) }

// Reader is the call's one reader (Reader): who it acts for, what it may
// see and change, and its audience — none once the owner confirmed the
// call.
func (c *ToolCall) Reader() Reader {
	r := Reader{Channel: c.Caller.Channel, Owner: c.Owner, Private: c.Private(), Perm: c.Perm,
		Speaker: c.Caller.Speaker, SpeakerID: c.Caller.SpeakerID, Component: c.Component, Audience: c.Audience}
	if c.Confirmed {
		return r.Confirmed()
	}
	return r
}

// CallOf is the call a reader r makes for the caller c as it came (no tool
// named yet).
func CallOf(r Reader, c Caller) *ToolCall {
	return &ToolCall{Caller: c, Owner: r.Owner, Perm: r.Perm, Component: r.Component, Audience: r.Audience}
}

// Decode reads the arguments into v (a struct with json tags), rejecting
// unknown fields, with an error the model can act on.
func (c *ToolCall) Decode(v any) error {
	dec := json.NewDecoder(bytes.NewReader(c.Args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: bad arguments: %v; call it again with the parameters its schema lists", c.Tool, err)
	}
	return nil
}
