package packets

import (
	"encoding/json"
	"time"
)

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

// ToolSpec is a tool as the part that owns it declares it: what the model
// is offered, and the rules the registry needs — its kind, its effects,
// the parameter that becomes a natural packet's aim. Memory, the event
// log and recall each export their tools with one; the registry takes it
// as it is.
type ToolSpec struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters,omitempty"` // a JSON Schema object
	Kind        ToolKind        `json:"kind"`
	Effects     []string        `json:"effects,omitempty"`
	// AimParam names the parameter that is a natural tool's aim.
	AimParam string `json:"-"`
	// Report marks a call that only reports (workspace_usage): it needs
	// no answer from the model.
	Report bool `json:"-"`
}

// SectionItem is one item a source of the prompt considered for its
// section (a workspace item, an event record, a tool result), as the
// packet's trace shows it.
type SectionItem struct {
	ID       string `json:"id"`
	Tokens   int    `json:"tokens"`
	Included bool   `json:"included"`
	Reason   string `json:"reason,omitempty"`
}

// ObserverStatus is an observer as `cyan observers ls` and GET
// /api/v1/observers show it: its triggers, state, last and next run, and
// tokens spent against its budget (package observer fills it).
type ObserverStatus struct {
	Name       string    `json:"name"`
	Source     string    `json:"source"`
	Triggers   []string  `json:"triggers"`
	State      string    `json:"state"`
	LastRun    time.Time `json:"last_run,omitzero"`
	LastResult string    `json:"last_result,omitempty"`
	NextRun    time.Time `json:"next_run,omitzero"`
	Runs       int       `json:"runs"`
	Spent      int       `json:"tokens_spent"`
	Budget     int       `json:"token_budget"`
}
