package turn

import (
	"context"
	"time"

	"github.com/cyan-agent/cyan/packets"
)

// Query describes the turn a section of the system prompt is filled for,
// and the turn as the tools and the limit-process see it.
type Query struct {
	Channel   string
	Speaker   string // who spoke the incoming message (display name)
	SpeakerID string // their platform id, when known
	Kind      string // "private" or "group"
	// MessageID is the incoming message of the turn ("" while a section is
	// filled for something other than a turn).
	MessageID string
	Now       time.Time
	// For is whom a proactive turn acts for (nil: the speaker).
	For *Principal
	// Reader is the turn's one reader (packets.Reader): who it acts for,
	// what they may see and run, and who reads its result. main-virtual
	// resolves it once when the turn starts; nil before (each part then
	// resolves the caller itself).
	Reader *packets.Reader
}

// Process is main-virtual's name as a caller of tools and limits.
const Process = "main-virtual"

// Caller is the turn as the tools see it (callID: the model's id of the
// call, "" when none). A proactive turn acts for its principal (For): a
// plan's maker, or an observer under its own permission object.
func (q Query) Caller(callID string) packets.Caller {
	c := packets.Caller{Channel: q.Channel, Speaker: q.Speaker, SpeakerID: q.SpeakerID, Kind: q.Kind, Process: Process, CallID: callID, MessageID: q.MessageID}
	if p := q.For; p != nil {
		c.Speaker, c.SpeakerID, c.Owner = p.Speaker, p.SpeakerID, p.Owner
		if p.Component != "" {
			c.Process = p.Component
		}
	}
	return c
}

// Source fills one section of the system prompt. main-virtual assembles
// the sections; each part that owns a section's data (memory, the event
// log, the lorebook) provides its Source.
type Source interface {
	// Section returns the section for this turn. It should fit budget tokens
	// as measured by count; the assembler clips what does not. An empty
	// Body leaves the section out.
	Section(ctx context.Context, q Query, budget int, count func(string) int) (Section, error)
}

// SourceFunc adapts a function to Source.
type SourceFunc func(ctx context.Context, q Query, budget int, count func(string) int) (Section, error)

// Section implements Source.
func (f SourceFunc) Section(ctx context.Context, q Query, budget int, count func(string) int) (Section, error) {
	return f(ctx, q, budget, count)
}

// Section is a filled section. Text from users, files, tools or memory in
// Body must already be escaped by the source.
type Section struct {
	Body  string
	Items []packets.SectionItem // what the source considered, for the trace
	Note  string                // anything the source wants the trace to say
}
