package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"

	"github.com/cyan-agent/cyan/packets"
)

// Kind tells how a tool takes its request (SPEC §5); the value type is
// shared with the parts that declare their own tools (packets.ToolSpec).
type Kind = packets.ToolKind

const (
	// Process tools take an action packet (plain parameters) and use no LLM.
	Process = packets.ToolProcess
	// Natural tools take a natural packet and think with a model.
	Natural = packets.ToolNatural
)

// Effects say what a tool can do to the world. They drive the default
// permission objects: a speaker who is not an owner gets no tool with any
// of Read, Write, Execute, Network, Operate or SelfEdit unless a rule says
// otherwise. A tool with no effects (speak) or only Memory is harmless.
const (
	EffectRead     = packets.EffectRead     // reads the owner's files or machine
	EffectWrite    = packets.EffectWrite    // changes files
	EffectExecute  = packets.EffectExecute  // runs programs
	EffectNetwork  = packets.EffectNetwork  // reaches the network
	EffectOperate  = packets.EffectOperate  // plans operations on the computer (its steps are checked one by one)
	EffectSelfEdit = packets.EffectSelfEdit // changes the agent itself (its custom tools)
	EffectMemory   = packets.EffectMemory   // changes the agent's own memory
)

// AllEffects lists every effect a tool may declare.
var AllEffects = []string{EffectRead, EffectWrite, EffectExecute, EffectNetwork, EffectOperate, EffectSelfEdit, EffectMemory}

// SpecFrom is the registry's spec of a tool another part declared.
func SpecFrom(s packets.ToolSpec, source string) Spec {
	return Spec{Name: s.Name, Title: s.Title, Description: s.Description, Parameters: s.Parameters, Kind: s.Kind,
		Effects: s.Effects, AimParam: s.AimParam, Report: s.Report, Source: source}
}

// Sources of tools, as `cyan tool ls` shows them.
const (
	SourceBuiltin  = "builtin"
	SourceDefault  = "extra/default"
	SourceProvided = "extra/provided"
	SourceCustom   = "extra/custom"
	SourceMCP      = "mcp" // "mcp:<server>"
)

// Spec describes a tool to the model and to the permission checks.
type Spec struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description"`
	// Parameters is a JSON Schema object; nil means no parameters.
	Parameters json.RawMessage `json:"parameters,omitempty"`
	Kind       Kind            `json:"kind"`
	// Effects are what the tool can do (AllEffects); every tool declares
	// them — an empty list, not nil, for one that does none (speak) — and
	// the registry refuses a tool that does not.
	Effects []string `json:"effects"`
	// AI marks a tool that runs a model: AI tools run one at a time.
	AI     bool   `json:"ai,omitempty"`
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
	// platform (workspace_usage): its result needs no answer from the model,
	// so a turn whose calls are all reports makes no further model request,
	// and the result is not shown in later prompts.
	Report bool `json:"report,omitempty"`
	// Transient marks a tool whose results are contents the agent opened
	// (open): like a file read (EffectRead), they are shown until the next
	// user message, then forgotten unless the agent put them into its
	// workspace (SPEC §3).
	Transient bool `json:"transient,omitempty"`
}

// TransientResults reports whether the tool's results are shown only until
// the next user message: it says so, or it reads files (EffectRead).
func (s Spec) TransientResults() bool { return s.Transient || slices.Contains(s.Effects, EffectRead) }

// RunFunc runs one call.
type RunFunc func(ctx context.Context, c *Call) (packets.Result, error)

// Tool is a spec and the function that runs it. Another package adds a
// built-in by building one and calling Registry.Register:
//
//	reg.Register(tools.Tool{Spec: tools.Spec{Name: "remember", Description: "…",
//		Parameters: schema, Kind: tools.Natural, Effects: []string{tools.EffectMemory},
//		AimParam: "text"}, Run: run})
type Tool struct {
	Spec
	Run RunFunc
	// packetParams are the nl_packet's fields the registry added to a
	// natural tool's parameters (packet.go).
	packetParams []string
}

// Caller is who a call runs for: the turn's channel and speaker.
type Caller struct {
	Channel   string `json:"channel,omitempty"`
	Speaker   string `json:"speaker,omitempty"`
	SpeakerID string `json:"speaker_id,omitempty"`
	Kind      string `json:"kind,omitempty"` // "private" or "group"
	// Owner is set by trusted local callers (the command line of the
	// owner); otherwise ownership comes from permissions.owners.
	Owner bool `json:"owner,omitempty"`
	// Process is the calling process ("main-virtual" when empty). A
	// component registered with its own permission object
	// (Registry.SetComponent: an observer) calls with that one.
	Process string `json:"process,omitempty"`
	// CallID is the model's id of the call, kept for the result message.
	CallID string `json:"call_id,omitempty"`
	// MessageID is the incoming message of the turn that made the call.
	MessageID string `json:"message_id,omitempty"`
}

// Call is one call as a tool's RunFunc sees it.
type Call struct {
	Tool   string
	Args   json.RawMessage // a JSON object
	Caller Caller
	// Natural is the request as a natural packet (natural tools only).
	Natural *packets.Natural
	// Confirmed is set when the owner approved this call.
	Confirmed bool

	reg *Registry
}

// Decode reads the arguments into v (a struct with json tags), rejecting
// unknown fields, with an error the model can act on.
func (c *Call) Decode(v any) error {
	dec := json.NewDecoder(bytes.NewReader(c.Args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: bad arguments: %v; call it again with the parameters its schema lists", c.Tool, err)
	}
	return nil
}

// Sub runs another tool for the same caller, through the same permission
// checks (a step of system_operation).
func (c *Call) Sub(ctx context.Context, tool string, args json.RawMessage) Outcome {
	return c.reg.call(ctx, c.Caller, tool, args, c.Confirmed)
}

var validName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]{0,63}$`)

// ValidName reports whether s can name a tool: a letter, then up to 63
// letters, digits, "_", "." or "-".
func ValidName(s string) bool { return validName.MatchString(s) }

// Schema builds a JSON Schema object from (name, type, description)
// triples; every parameter is required unless its name ends in "?".
func Schema(params ...string) json.RawMessage {
	props := map[string]any{}
	required := []string{}
	for i := 0; i+2 < len(params); i += 3 {
		name, typ, desc := params[i], params[i+1], params[i+2]
		if n, ok := cutSuffix(name, "?"); ok {
			name = n
		} else {
			required = append(required, name)
		}
		props[name] = map[string]any{"type": typ, "description": desc}
	}
	b, _ := json.Marshal(map[string]any{"type": "object", "properties": props, "required": required})
	return b
}

func cutSuffix(s, suffix string) (string, bool) {
	if len(s) >= len(suffix) && s[len(s)-len(suffix):] == suffix {
		return s[:len(s)-len(suffix)], true
	}
	return s, false
}
