package tts

import (
	"context"
	"errors"
	"runtime/debug"
	"slices"

	"github.com/cyan-agent/cyan/journal"
	"github.com/cyan-agent/cyan/packets"
)

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
//   - the end of an answered turn (journal.TurnDone).
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
			v.delta(e.Channel, d.MessageID, d.Text, d.Break, d.Cut != "")
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
		if segs, ok := packets.ParseSpeech(m.Text); ok {
			v.Speak(e.Channel, m.ReplyTo, packets.SpeechKey(m.ID), segs)
		}
	case journal.TurnDone:
		var t journal.Turn
		if e.Decode(&t) == nil && t.Answered() {
			v.TurnDone(e.Channel, t.MessageID)
		}
	}
}

// Speak voices the segments a turn's speak call chose, in order, with
// their emotion and language. From then on the turn's text is not voiced:
// what a live utterance of the turn still holds, and its segments not yet
// handed to Emit, are dropped, and later text is ignored. key (the speak
// result's id) is voiced once.
func (v *Voice) Speak(channel, turn, key string, segs []packets.Segment) {
	if !v.Voiced(channel) {
		return
	}
	v.mu.Lock()
	st := v.state(channel)
	if key != "" && slices.Contains(st.keys, key) {
		v.mu.Unlock()
		return
	}
	if key != "" {
		st.keys = remember(st.keys, key)
	}
	if turn != "" && !slices.Contains(st.speakers, turn) {
		st.speakers = remember(st.speakers, turn)
	}
	u := st.live[turn]
	v.mu.Unlock()
	u.silence()
	v.enqueue(channel, turn, cleanSegments(segs), false)
}

// Delta voices live text of the reply to turn as the model writes it (a
// "@br" when brk): the first starts the turn's utterance; a turn that
// called speak, or has ended, is not voiced. Turns of a channel run one at
// a time, so a new turn's text ends the utterance of the one before.
func (v *Voice) Delta(channel, turn, text string, brk bool) {
	v.delta(channel, turn, text, brk, false)
}

// Cut ends the live utterance of a turn whose text was cut off mid-answer:
// it stops at the last whole sentence.
func (v *Voice) Cut(channel, turn string) { v.delta(channel, turn, "", false, true) }

func (v *Voice) delta(channel, turn, text string, brk, cut bool) {
	if !v.Voiced(channel) || turn == "" {
		return
	}
	v.mu.Lock()
	if v.closed {
		v.mu.Unlock()
		return
	}
	st := v.state(channel)
	if slices.Contains(st.speakers, turn) || slices.Contains(st.spoken, turn) {
		v.mu.Unlock()
		return
	}
	var older []*Utterance
	for t, u := range st.live {
		if t != turn {
			older = append(older, u)
		}
	}
	u := st.live[turn]
	if u == nil {
		u = v.newUtterance(channel, turn)
		st.live[turn] = u
	}
	v.mu.Unlock()
	for _, o := range older {
		o.End()
	}
	switch {
	case cut:
		u.Cut()
	case brk:
		u.Break()
	default:
		u.Text(text)
	}
}

// TurnDone ends the live utterance of turn: what it holds is voiced.
func (v *Voice) TurnDone(channel, turn string) {
	v.mu.Lock()
	var u *Utterance
	if st := v.chans[channel]; st != nil {
		u = st.live[turn]
	}
	v.mu.Unlock()
	u.End()
}

// silenced reports whether turn's text is not voiced (it called speak).
func (v *Voice) silenced(channel, turn string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	st := v.chans[channel]
	return st != nil && slices.Contains(st.speakers, turn)
}

// cleanSegments makes segments from elsewhere (the speak tool, a script)
// speakable: markup and references out, empty ones dropped, the emotion
// and the language normalised (NormalizeSegment).
func cleanSegments(segs []packets.Segment) []packets.Segment {
	var clean []packets.Segment
	for _, s := range segs {
		s.Text = Speakable(Unmark(s.Text, ActionsSpeak))
		if s.Text == "" || !hasLetters(s.Text) {
			continue
		}
		clean = append(clean, NormalizeSegment(s))
	}
	return clean
}
