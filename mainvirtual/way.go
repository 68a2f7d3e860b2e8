package mainvirtual

import (
	"strings"

	"github.com/cyan-agent/cyan/turn"
)

// outflow is the one way out of a model output. Its content, as the
// provider writes it (or whole, for a call that did not stream), passes
// in order:
//
//  1. the cleaner: reasoning the chat template opened, the agent's own
//     line prefix, and a line forged for another speaker with all after it;
//  2. the markup filter: "@br" splits messages, "<empty_reply>" and the
//     workspace-usage trailer go, @last references are expanded;
//  3. the limit-process's holdback (turn.TextLimit): forbidden patterns,
//     max_output_chars, the messages the channel may still be sent.
//
// What comes out is shown live (emit) and is, message by message, exactly
// what is stored — and so what the bridges send and the voice speaks.
type outflow struct {
	clean  *cleaner
	filter *streamFilter
	limit  turn.TextLimit               // nil: no limit-process
	emit   func(turn.StreamEvent) error // nil: nothing is shown live
	after  bool                         // an earlier step's answer was shown: open with a Break

	parts   []string
	quotes  [][]string
	cur     strings.Builder
	acc     []string // the quotes of the message being written
	broke   bool     // the current message ended; a Break goes before more text
	stopped bool     // no more messages may go out
	shown   bool     // some text was emitted
	err     error    // the listener's error: the call stops
}

// newOutflow makes the way out of one model output.
func newOutflow(agent string, expectThink bool, limit turn.TextLimit, emit func(turn.StreamEvent) error, expand func(string) (string, []string)) *outflow {
	o := &outflow{clean: newCleaner(agent, expectThink), limit: limit, emit: emit}
	o.filter = newStreamFilter(o.filtered)
	o.filter.onBreak = o.endPart
	if expand != nil {
		o.filter.expand = func(ref string) string {
			s, ids := expand(ref)
			o.acc = append(o.acc, ids...)
			return s
		}
	}
	return o
}

// write feeds a piece of content.
func (o *outflow) write(s string) error {
	if c := o.clean.write(s); c != "" {
		if err := o.filter.write(c); err != nil {
			return err
		}
	}
	return o.err
}

// close ends the output; parts are then final.
func (o *outflow) close() error {
	if c := o.clean.close(); c != "" {
		if err := o.filter.write(c); err != nil {
			return err
		}
	}
	if err := o.filter.close(); err != nil {
		return err
	}
	o.endPart()
	return o.err
}

// filtered takes the markup filter's text; its Breaks are the outflow's
// own (endPart), so they are ignored here.
func (o *outflow) filtered(e turn.StreamEvent) error {
	if e.Break || e.Text == "" {
		return nil
	}
	text := e.Text
	if o.limit != nil {
		text = o.limit.Write(text)
	}
	o.release(text)
	return o.err
}

// endPart closes the message being written.
func (o *outflow) endPart() {
	if o.limit != nil {
		o.release(o.limit.End())
	}
	if o.cur.Len() > 0 {
		o.parts = append(o.parts, strings.TrimSpace(o.cur.String()))
		o.quotes = append(o.quotes, o.acc)
		o.cur.Reset()
		o.broke = true
	}
	o.acc = nil
}

// release sends text that passed every stage.
func (o *outflow) release(s string) {
	if o.stopped || o.err != nil {
		return
	}
	if o.cur.Len() == 0 {
		s = strings.TrimLeft(s, " \t\r\n")
	}
	if s == "" {
		return
	}
	if o.cur.Len() == 0 {
		if o.limit != nil && o.limit.Parts() >= 0 && len(o.parts) >= o.limit.Parts() {
			o.stopped = true
			return
		}
		if o.broke || (o.after && !o.shown) {
			o.send(turn.StreamEvent{Break: true})
		}
		o.broke = false
	}
	o.cur.WriteString(s)
	o.send(turn.StreamEvent{Text: s})
	o.shown = true
}

func (o *outflow) send(e turn.StreamEvent) {
	if o.emit == nil || o.err != nil {
		return
	}
	o.err = o.emit(e)
}

// cut tells the live reader that the output ended before its finish.
func (o *outflow) cut(why string) {
	o.send(turn.StreamEvent{Cut: why})
}

// endPartShown closes the message being written with what was shown of
// it; what the stages still held is dropped (the output was cut).
func (o *outflow) endPartShown() {
	if o.cur.Len() > 0 {
		o.parts = append(o.parts, strings.TrimSpace(o.cur.String()))
		o.quotes = append(o.quotes, o.acc)
		o.cur.Reset()
	}
	o.stopped = true
}
