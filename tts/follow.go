package tts

import (
	"context"
	"encoding/json"
	"errors"
	"runtime/debug"

	"github.com/cyan-agent/cyan/journal"
)

// ParseSpeech reads a speak result ({"speech": [segment, …]}), and whether
// it holds at least one segment.
func ParseSpeech(text string) ([]Segment, bool) {
	var out struct {
		Speech []Segment `json:"speech"`
	}
	if json.Unmarshal([]byte(text), &out) != nil || len(out.Speech) == 0 {
		return nil, false
	}
	return out.Speech, true
}

// SpeechKey is the key of a speak result's speech (the message's id plus
// "/speech"): the router's speech packet and the voice use it.
func SpeechKey(messageID string) string { return messageID + "/speech" }

// Follow voices the voiced channels from the journal until ctx ends (then
// it returns nil), in the order things happened there:
//
//   - a reply's live text (journal.ReplyDelta) as the model writes it —
//     every turn is streamed from its provider, whether its caller streams
//     or not, so a reply is voiced as it is written;
//   - the result of a call of speakTool (journal.MessageTool): its
//     segments are spoken, and the rest of that turn's text is not (Speak);
//   - a stored outgoing message no live text voiced (journal.MessageOut: a
//     greeting, a message written without a model);
//   - the end of a turn (journal.TurnDone).
//
// The journal and not the router's outbox, so that a speak result is seen
// before the text the model writes after it.
func (v *Voice) Follow(ctx context.Context, j *journal.Journal, speakTool string) error {
	sub := j.Subscribe(j.Last(), journal.Filter{Kinds: []journal.Kind{
		journal.ReplyDelta, journal.MessageOut, journal.MessageTool, journal.TurnDone}})
	for {
		evs, err := sub.Next(ctx)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, journal.ErrClosed) {
				return nil
			}
			return err
		}
		for _, e := range evs {
			v.event(e, speakTool)
		}
	}
}

// event voices one journal event; a panic is logged and the event skipped.
func (v *Voice) event(e journal.Event, speakTool string) {
	defer func() {
		if p := recover(); p != nil {
			v.log.Error("voice panicked on an event; it is skipped", "event", e.ID, "kind", e.Kind, "panic", p, "stack", string(debug.Stack()))
		}
	}()
	switch e.Kind {
	case journal.ReplyDelta:
		var d journal.Delta
		if e.Decode(&d) == nil {
			v.Delta(e.Channel, d.MessageID, d.Text, d.Break)
		}
	case journal.MessageOut:
		var m journal.Message
		if e.Decode(&m) == nil && !m.Empty {
			v.Outgoing(e.Channel, m.ReplyTo, m.ID, m.Text)
		}
	case journal.MessageTool:
		var m journal.Message
		if e.Decode(&m) != nil || m.ToolName != speakTool {
			return
		}
		if segs, ok := ParseSpeech(m.Text); ok {
			v.Speak(e.Channel, m.ReplyTo, SpeechKey(m.ID), segs)
		}
	case journal.TurnDone:
		var t journal.Turn
		if e.Decode(&t) == nil {
			v.TurnDone(e.Channel, t.MessageID)
		}
	}
}
