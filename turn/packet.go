package turn

import (
	"time"

	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/packets"
)

// Slot names the sections of the system prompt, in the order they appear
// (SPEC §2).
type Slot string

const (
	SlotMain      Slot = "main"       // the persona's root prompt
	SlotReference Slot = "reference"  // the persona's few-shot style corpus
	SlotToolCalls Slot = "tool_calls" // results of the latest tool calls
	SlotEvents    Slot = "events"     // recent event records
	SlotWorkspace Slot = "workspace"  // workspace items
	SlotPulled    Slot = "pulled"     // pulled-info area
	SlotPlans     Slot = "plans"      // plan steps
)

// SlotLoreBefore and SlotLoreAfter hold the lorebook entries that fired
// this turn: those placed before the character's definition (the main
// prompt), and the rest after it.
const (
	SlotLoreBefore Slot = "lorebook_before"
	SlotLoreAfter  Slot = "lorebook_after"
)

// SectionTrace is a section as it went into the packet.
type SectionTrace struct {
	Slot    Slot                  `json:"slot"`
	Budget  int                   `json:"budget"`
	Tokens  int                   `json:"tokens"`
	Clipped bool                  `json:"clipped,omitempty"`
	Items   []packets.SectionItem `json:"items,omitempty"`
	Note    string                `json:"note,omitempty"`
	Error   string                `json:"error,omitempty"`
}

// ContextTrace records the context messages chosen for the packet.
type ContextTrace struct {
	Budget   int `json:"budget"`
	Tokens   int `json:"tokens"`
	MaxCount int `json:"max_count"` // the persona's context_count
	// Start is the oldest message the context could hold (the previous
	// topic's first), when a ContextStarter gave one; StartError is why it
	// could not.
	Start      string `json:"start,omitempty"`
	StartError string `json:"start_error,omitempty"`
	// MiniFull is the persona's mini_full_context_count: that many newest
	// model messages are never compressed.
	MiniFull int           `json:"mini_full"`
	Included []string      `json:"included"` // message ids, oldest first
	Dropped  []DroppedItem `json:"dropped,omitempty"`
	// Compressed are the included model messages shown in compressed form.
	Compressed []CompressedItem `json:"compressed,omitempty"`
	// Cut are the messages too large for the budget by themselves, shown
	// cut (mainvirtual's oversize.go).
	Cut []CutItem `json:"cut,omitempty"`
	// Note says what compression could not do (its bound, a failure).
	Note string `json:"note,omitempty"`
	// DepthPrompt is the tokens of the persona's depth prompt (a card's
	// Character's Note) put into the conversation (0: none).
	DepthPrompt int `json:"depth_prompt,omitempty"`
}

// CutItem is a message too large for the context budget on its own, shown
// cut (its beginning, then a line with the reference to the whole of it).
// The stored message stays whole.
type CutItem struct {
	ID     string `json:"id"`
	Tokens int    `json:"tokens"` // the whole message's
	// Shown is the tokens of the cut text the model reads.
	Shown int `json:"shown"`
	// Ref opens the whole message with the open tool.
	Ref string `json:"ref"`
}

// CompressedItem is a model message shown in compressed form.
type CompressedItem struct {
	ID     string `json:"id"`
	Tokens int    `json:"tokens"` // the full message's
	// CompressedTokens is the compressed line's.
	CompressedTokens int `json:"compressed_tokens"`
	// Cached is true when an earlier turn made the compressed form.
	Cached bool `json:"cached,omitempty"`
	// TraceID is the generate trace of the call that made it.
	TraceID string `json:"trace_id,omitempty"`
}

// DroppedItem is a message left out, with the reason.
type DroppedItem struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// Packet is an assembled prompt packet: the exact provider messages and how
// they were made.
type Packet struct {
	Channel  string         `json:"channel"`
	Time     time.Time      `json:"time"`
	Messages []llm.Message  `json:"messages"`
	Tools    []llm.Tool     `json:"tools,omitempty"`
	Sections []SectionTrace `json:"sections"`
	Context  ContextTrace   `json:"context"`
	// SystemTokens and Tokens are the system prompt's and the whole packet's
	// token counts.
	SystemTokens int `json:"system_tokens"`
	Tokens       int `json:"tokens"`
	// AssemblyMicros is how long assembly took.
	AssemblyMicros int64 `json:"assembly_us"`
	// ToolTokens is the offered tools' schemas as counted (the server
	// renders them into the prompt); Tokens includes them.
	ToolTokens int `json:"tool_tokens,omitempty"`
	// Window is how the prompt was fitted to the server's window, when
	// the window is known.
	Window *WindowTrace `json:"window,omitempty"`
}

// WindowTrace is how a prompt was fitted to the server's context window.
type WindowTrace struct {
	// Tokens is the server's window; Source says how it is known.
	Tokens int    `json:"tokens"`
	Source string `json:"source,omitempty"`
	// Reserve is kept for the answer; Limit is what the prompt may use
	// (the window less the reserve and a margin for the server's own
	// tokenizer, or less after the server refused a prompt).
	Reserve int `json:"reserve"`
	Limit   int `json:"limit"`
	// Context is the conversation's budget this turn.
	Context int `json:"context"`
	// Left are the sections left out to fit (pulled info, then lorebook).
	Left []Slot `json:"left,omitempty"`
	// Note says what the window changed, or that it fits.
	Note string `json:"note,omitempty"`
}
