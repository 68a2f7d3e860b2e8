package journal

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Kind names what an event is about. Packages may define their own kinds
// (a bridge its "bridge.qq.…"); the ones here are the daemon's.
type Kind string

// The kinds the daemon posts, with the payload each carries.
const (
	// MessageIn: a message reached a conversation and is stored — a
	// person's, or the platform's note that starts a proactive turn
	// (Proactive set). Payload Message.
	MessageIn Kind = "message.in"
	// MessageOut: an outgoing message of the agent is stored (one "@br"
	// part of an answer; Proactive when it spoke first). Payload Message.
	MessageOut Kind = "message.out"
	// MessageTool: a tool's result (or a platform notice) is stored in a
	// conversation. Payload Message.
	MessageTool Kind = "message.tool"
	// MessagesImported: history was imported (a batch of an import, a
	// restore, a bulk append). Payload Imported.
	MessagesImported Kind = "messages.imported"
	// ReplyDelta: live text of a reply while the model writes it
	// (transient: never stored). Payload Delta.
	ReplyDelta Kind = "reply.delta"
	// TurnDone: main-virtual ended a turn: answered (its replies are
	// stored), failed or interrupted (Turn.Outcome). Payload Turn.
	TurnDone Kind = "turn.done"
	// MemoryChanged: the workspace or its plans changed. No payload.
	MemoryChanged Kind = "memory.changed"
	// RecordsChanged: the event log's records or theories changed. No
	// payload.
	RecordsChanged Kind = "records.changed"
	// PlanDue: a deferred plan came due. Payload Plan.
	PlanDue Kind = "plan.due"
	// ProactiveSpeech: an observer decided to speak first. Payload Speech.
	ProactiveSpeech Kind = "speech.proactive"
	// ToolApproval: a tool call waits for the owner, or was answered.
	// Payload Approval.
	ToolApproval Kind = "tool.approval"
	// BridgeState, VoiceState, PartState: a bridge, a voice or a
	// supervised part changed state. Payload State.
	BridgeState Kind = "bridge.state"
	VoiceState  Kind = "voice.state"
	// VoiceSpeech: the voice spoke a segment of a reply in a voiced
	// channel. Payload: the voice's segment (package tts's Speech).
	VoiceSpeech Kind = "voice.speech"
	PartState   Kind = "part.state"
	// BackupDone: a scheduled backup was made or failed. Payload Backup.
	BackupDone Kind = "backup.done"
	// Gap: events a reader was owed could not be read any more (transient
	// ones that left memory, or old ones past the store's bound). Payload
	// GapInfo; its ID is 0.
	Gap Kind = "journal.gap"
)

// Event is one thing that happened.
type Event struct {
	ID   uint64    `json:"id"`
	Kind Kind      `json:"kind"`
	Time time.Time `json:"time"`
	// Channel is the conversation it belongs to ("" for none).
	Channel string `json:"channel,omitempty"`
	// Proactive marks what belongs to a turn the agent began on its own
	// (a due plan, an observer's suggestion), so that observers of
	// "after a response" can tell it from an answer to a person.
	Proactive bool `json:"proactive,omitempty"`
	// Origin names the part that caused it (the observer whose proactive
	// turn this is, the bridge that received a message).
	Origin string `json:"origin,omitempty"`
	// Transient events live only in memory (reply deltas).
	Transient bool            `json:"transient,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
}

// New builds an event with data as its JSON payload (nil: none).
func New(kind Kind, channel string, data any) Event {
	e := Event{Kind: kind, Channel: channel}
	if data != nil {
		b, err := json.Marshal(data)
		if err != nil {
			b, _ = json.Marshal(map[string]string{"error": err.Error()})
		}
		e.Data = b
	}
	return e
}

// Decode reads the payload into v.
func (e Event) Decode(v any) error {
	if len(e.Data) == 0 {
		return fmt.Errorf("journal: event %d (%s) has no payload", e.ID, e.Kind)
	}
	if err := json.Unmarshal(e.Data, v); err != nil {
		return fmt.Errorf("journal: event %d (%s): %w", e.ID, e.Kind, err)
	}
	return nil
}

// Message is the payload of MessageIn, MessageOut and MessageTool: the
// stored message.
type Message struct {
	ID        string    `json:"id"`
	Role      string    `json:"role"` // user, assistant, system, tool
	User      string    `json:"user,omitempty"`
	UserID    string    `json:"user_id,omitempty"`
	Kind      string    `json:"kind,omitempty"` // private or group
	Text      string    `json:"text"`
	ReplyTo   string    `json:"reply_to,omitempty"`
	Step      int       `json:"step,omitempty"`
	Part      int       `json:"part,omitempty"`
	Empty     bool      `json:"empty_reply,omitempty"`
	ToolName  string    `json:"tool_name,omitempty"`
	Time      time.Time `json:"time"`
	Proactive bool      `json:"proactive,omitempty"`
	// Incomplete: the model's server cut the answer off mid-way.
	Incomplete bool `json:"incomplete,omitempty"`
}

// Imported is the payload of MessagesImported.
type Imported struct {
	Added   int `json:"added"`
	Skipped int `json:"skipped"`
	// Spans are, for a batch of an import, the channels it covers, each
	// with the times of its first and last message (stored now or before:
	// an import run again still covers them). A restore or a bulk append
	// leaves them out.
	Spans []Span `json:"spans,omitempty"`
	// Final marks an import's last batch: the whole history is in.
	Final bool `json:"final,omitempty"`
}

// Span is a channel and the times of the messages an import batch holds
// there.
type Span struct {
	Channel string    `json:"channel"`
	From    time.Time `json:"from"`
	To      time.Time `json:"to"`
}

// Delta is the payload of ReplyDelta: text to show (or speak) now, or a
// break between two outgoing messages. MessageID is the incoming message
// of the turn (the reply's ReplyTo once stored).
type Delta struct {
	MessageID string `json:"message_id"`
	Text      string `json:"text,omitempty"`
	Break     bool   `json:"break,omitempty"`
	// Cut: the model's output ended before its finish, and why; what was
	// shown is stored marked incomplete.
	Cut string `json:"cut,omitempty"`
}

// How a turn ended (Turn.Outcome).
const (
	TurnAnswered    = "answered"    // its first answer was stored
	TurnFailed      = "failed"      // it ended with no answer stored
	TurnInterrupted = "interrupted" // its context ended first (the daemon stopping)
)

// Turn is the payload of TurnDone. Replies, the principal and the usage
// are an answered turn's.
type Turn struct {
	MessageID string `json:"message_id"`
	// Outcome is TurnAnswered, TurnFailed or TurnInterrupted ("" in events
	// written before it was kept: answered, the only turns posted then).
	Outcome string `json:"outcome,omitempty"`
	// Millis is the turn's time from its message stored to its end.
	Millis    int64    `json:"ms"`
	Kind      string   `json:"kind,omitempty"` // private or group
	Speaker   string   `json:"speaker,omitempty"`
	SpeakerID string   `json:"speaker_id,omitempty"`
	Replies   []string `json:"replies"`
	// Owner and Component are set when a proactive turn acts for a
	// principal: the owner, or an observer under its own permission.
	Owner     bool   `json:"owner,omitempty"`
	Component string `json:"component,omitempty"`
	// UsagePath is how the answer reported its workspace use ("tool",
	// "trailer", "" for none); Used and Maybe are a trailer's ids.
	UsagePath string   `json:"usage_path,omitempty"`
	Used      []string `json:"used,omitempty"`
	Maybe     []string `json:"maybe,omitempty"`
	// Error is why the turn failed or was interrupted, or, for an
	// answered turn, why a step after its first answer failed.
	Error string `json:"error,omitempty"`
}

// Answered reports whether the turn's first answer was stored.
func (t Turn) Answered() bool { return t.Outcome == "" || t.Outcome == TurnAnswered }

// Plan is the payload of PlanDue.
type Plan struct {
	ID   string `json:"id"`
	Text string `json:"text"`
	When string `json:"when"`
}

// Speech is the payload of ProactiveSpeech.
type Speech struct {
	Observer string `json:"observer"`
	Note     string `json:"note"`
}

// Approval is the payload of ToolApproval.
type Approval struct {
	ID    string `json:"id"`
	Tool  string `json:"tool"`
	State string `json:"state"` // waiting, allowed, denied, expired
}

// Backup is the payload of BackupDone: the file made, or why none was.
type Backup struct {
	File  string `json:"file,omitempty"`
	Bytes int64  `json:"bytes,omitempty"`
	Error string `json:"error,omitempty"`
}

// State is the payload of BridgeState, VoiceState and PartState.
type State struct {
	Name  string `json:"name"`
	State string `json:"state"`
	Error string `json:"error,omitempty"`
}

// GapInfo is the payload of Gap: events with ids in (After, Before) that
// matched the reader may be missing.
type GapInfo struct {
	After  uint64 `json:"after"`
	Before uint64 `json:"before"`
	Reason string `json:"reason"`
}

type originKey struct{}

// WithOrigin marks ctx as work of the named part (an observer's firing),
// so the events it causes carry Origin.
func WithOrigin(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, originKey{}, name)
}

// OriginOf is the part ctx works for ("" when none is named).
func OriginOf(ctx context.Context) string {
	s, _ := ctx.Value(originKey{}).(string)
	return s
}
