package mainvirtual

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/journal"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/notation"
	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/turn"
)

// Turn stores an incoming message and answers it: assemble the packet, call
// the model, deliver its answer, then run its tool calls and feed their
// results back, up to the step bound (the last step offers no tools, so the
// model must answer in words).
func (mv *MainVirtual) Turn(ctx context.Context, in turn.Incoming, l turn.Listener) (*turn.Result, error) {
	return mv.turn(ctx, in, "", l)
}

// turn is Turn storing the message with an external id (TurnOnce's key).
func (mv *MainVirtual) turn(ctx context.Context, in turn.Incoming, externalID string, l turn.Listener) (*turn.Result, error) {
	if err := store.ValidChannel(in.Channel); err != nil {
		return nil, err
	}
	if strings.TrimSpace(in.Text) == "" {
		return nil, fmt.Errorf("%w: the message text is empty", store.ErrInvalid)
	}
	if len(in.Text) > turn.MaxTextBytes {
		return nil, fmt.Errorf("%w: the message is %d bytes; the limit is %d (send a file reference instead)", store.ErrInvalid, len(in.Text), turn.MaxTextBytes)
	}
	if in.User == "" {
		in.User = "user"
	}
	switch in.Kind {
	case "":
		in.Kind = turn.KindPrivate
	case turn.KindPrivate, turn.KindGroup:
	default:
		return nil, fmt.Errorf("%w: kind %q is neither %q nor %q", store.ErrInvalid, in.Kind, turn.KindPrivate, turn.KindGroup)
	}
	unlock := mv.locks.lock(in.Channel)
	defer unlock()

	now := mv.now()
	msg := &store.Message{Channel: in.Channel, Role: store.RoleUser, User: in.User, UserID: in.UserID, Kind: in.Kind, Text: in.Text, Tokens: mv.count.Count(in.Text),
		ExternalID: externalID}
	q := turn.Query{Channel: in.Channel, Speaker: in.User, SpeakerID: in.UserID, Kind: in.Kind, Now: now}
	greeting := mv.greetingFor(q, in.NoGreeting)
	msgs := []*store.Message{msg}
	if greeting != nil {
		msgs = []*store.Message{greeting, msg}
	}
	if err := mv.store.Append(now, msgs...); err != nil {
		if errors.Is(err, store.ErrDuplicate) {
			return nil, err
		}
		return nil, &turn.TurnError{Stage: "store", Err: err}
	}
	if l.Stored != nil {
		l.Stored(msg)
	}
	q.MessageID = msg.ID
	if mv.limits != nil {
		if wait, reason := mv.limits.Admit(q); wait > 0 {
			return nil, &turn.Limited{Message: msg, RetryAfter: wait, Reason: reason}
		}
	}
	return mv.run(ctx, msg, q, l, greeting)
}

// greetingFor makes the persona's greeting of a channel that has no message
// yet (nil: none). It runs under the channel's lock.
func (mv *MainVirtual) greetingFor(q turn.Query, skip bool) *store.Message {
	if mv.greeting == nil || skip {
		return nil
	}
	if last, err := mv.store.Recent(q.Channel, store.Window{Limit: 1}); err != nil || len(last) > 0 {
		return nil
	}
	text, err := mv.greeting(q)
	if err != nil {
		mv.log.Warn("the persona's greeting does not render; the channel opens without it", "channel", q.Channel, "err", err)
		return nil
	}
	if strings.TrimSpace(text) == "" {
		return nil
	}
	return &store.Message{Channel: q.Channel, Role: store.RoleAssistant, User: mv.AgentName(), Kind: q.Kind,
		Text: text, Tokens: mv.count.Count(text), Proactive: true}
}

// Proactive lets the agent speak first in a channel: the platform's note
// ("plan p3 is due: …") is stored as a "^system" line, and a turn runs on
// it as on a user message. What the agent says is marked proactive; it may
// also choose silence. kind is the channel's kind ("" is private).
func (mv *MainVirtual) Proactive(ctx context.Context, channel, kind, note string, l turn.Listener) (*turn.Result, error) {
	return mv.ProactiveAs(ctx, channel, kind, note, nil, l)
}

// ProactiveAs is Proactive acting for a principal: the turn's tool calls
// and reads have its rights (nil: the platform's "system" line, as
// Proactive).
func (mv *MainVirtual) ProactiveAs(ctx context.Context, channel, kind, note string, as *turn.Principal, l turn.Listener) (*turn.Result, error) {
	if err := store.ValidChannel(channel); err != nil {
		return nil, err
	}
	if strings.TrimSpace(note) == "" {
		return nil, fmt.Errorf("%w: a proactive turn needs a note saying why", store.ErrInvalid)
	}
	unlock := mv.locks.lock(channel)
	defer unlock()
	if kind == "" {
		kind = mv.channelKind(channel)
	}
	now := mv.now()
	msg := &store.Message{Channel: channel, Role: store.RoleSystem, User: "system", Kind: kind, Text: note, Tokens: mv.count.Count(note), Proactive: true}
	if err := mv.store.Append(now, msg); err != nil {
		return nil, &turn.TurnError{Stage: "store", Err: err}
	}
	if l.Stored != nil {
		l.Stored(msg)
	}
	return mv.run(ctx, msg, turn.Query{Channel: channel, Speaker: "system", Kind: kind, MessageID: msg.ID, Now: now, For: as}, l, nil)
}

// channelKind is the kind of a channel a proactive turn names none for: a
// group once any of its recent messages came from one (its audience is the
// group's, whoever speaks), else private. The caller holds its lock.
func (mv *MainVirtual) channelKind(channel string) string {
	recent, err := mv.store.Recent(channel, store.Window{Limit: 50})
	if err != nil {
		mv.log.Warn("the channel's kind is unknown; a proactive turn there is taken as a group's", "channel", channel, "err", err)
		return turn.KindGroup
	}
	for _, m := range recent {
		if !packets.Private(m.Kind) {
			return turn.KindGroup
		}
	}
	return turn.KindPrivate
}

// Readers is what Tools may also be: the resolver of a turn's one reader
// (packets.Reader, tools.Turns). main-virtual asks it once when a turn
// starts and carries the answer in the turn's query, so the prompt's
// sources, the tools and the limits all see the same reader.
type Readers interface {
	Reader(q turn.Query) packets.Reader
}

// run answers the stored message msg: assemble, call, deliver, run tools.
// A greeting stored before msg is delivered first. The caller holds the
// channel's lock.
func (mv *MainVirtual) run(ctx context.Context, msg *store.Message, q turn.Query, l turn.Listener, greeting *store.Message) (*turn.Result, error) {
	if rs, ok := mv.tools.(Readers); ok && q.Reader == nil {
		rd := rs.Reader(q)
		q.Reader = &rd
	}
	var answered *turn.Result
	res, err := mv.answer(ctx, msg, q, l, greeting, &answered)
	mv.turnDone(ctx, msg, q, answered, err)
	return res, err
}

// answer is run's work. Once the turn's first answer is stored, it sets
// *answered to the turn's result (complete when answer returns).
func (mv *MainVirtual) answer(ctx context.Context, msg *store.Message, q turn.Query, l turn.Listener, greeting *store.Message, answered **turn.Result) (*turn.Result, error) {
	now := q.Now
	tr := &turn.Trace{Channel: msg.Channel, MessageID: msg.ID, Time: now}
	defer mv.keepTrace(tr)

	packet, err := mv.asm.assemble(ctx, q)
	if err != nil {
		tr.Error = err.Error()
		return nil, &turn.TurnError{Stage: "assemble", Message: msg, Err: err}
	}
	tr.Packet = packet
	offered := mv.tools.Offer(q)
	packet.Tools = offered
	res := &turn.Result{Message: msg, Replies: []*store.Message{}, Trace: tr}
	if greeting != nil {
		res.Greeting, res.Replies = greeting, append(res.Replies, greeting)
		if l.Stream != nil {
			_ = l.Stream(turn.StreamEvent{Text: greeting.Text}) // a listener gone is the model call's to notice
		}
		if l.Reply != nil {
			l.Reply(greeting) // it is on the journal since it was stored
		}
	}
	var usage turn.Usage
	defer func() {
		res.Usage = usage
		tr.Usage = usage.Path
		if tr.Usage == "" {
			tr.Usage = turn.UsageNone
			if shown(packet, turn.SlotWorkspace) {
				tr.Usage = turn.UsageLexical
			}
		}
	}()
	stream := mv.liveStream(msg, l.Stream)
	conv := packet.Messages
	agent := mv.AgentName()
	refs := &lastRefs{store: mv.store, channel: msg.Channel, agent: agent}

	for step := 0; step < mv.steps; step++ {
		tools := offered
		if step == mv.steps-1 {
			tools = nil
		}
		st := turn.StepTrace{Step: step, Replies: []string{}}
		for _, t := range tools {
			st.Offered = append(st.Offered, t.Name)
		}
		began := time.Now()
		resp, err := mv.call(ctx, llm.Request{Messages: conv, Tools: tools, Temperature: mv.temp, MaxTokens: mv.maxTok}, stream, len(res.Replies) > 0, refs)
		st.Millis = time.Since(began).Milliseconds()
		if err != nil {
			st.Error = err.Error()
			tr.Steps = append(tr.Steps, st)
			tr.Error = err.Error()
			if step == 0 {
				return nil, &turn.TurnError{Stage: "llm", Message: msg, Err: err}
			}
			res.Err = err
			return res, nil
		}
		if tr.Model == "" {
			tr.Model = resp.Model
		}
		st.Output, st.Reasoning, st.Usage, st.FinishReason = resp.Content, resp.Reasoning, resp.Usage, resp.FinishReason
		calls := resp.ToolCalls
		if len(tools) == 0 && len(calls) > 0 {
			st.Note = fmt.Sprintf("ignored %d tool call(s): no tools were offered at this step", len(calls))
			calls = nil
		}
		calls = withCallIDs(calls, step)
		st.ToolCalls = calls

		out := SplitOutput(resp.Content, agent)
		merge(&usage, out.Usage)
		var notices []turn.LimitNotice
		if mv.limits != nil {
			out.Parts, notices = mv.limits.Output(q, out.Parts, resp.Usage)
			st.Limits = append(st.Limits, notices...)
		}
		st.Replies = append(st.Replies, out.Parts...)
		st.Empty = out.Empty && len(calls) == 0
		stored := mv.answerMessages(msg, step, out, calls, refs)
		for _, m := range stored {
			m.Proactive = msg.Proactive
		}
		stored = append(stored, mv.limitMessages(msg, step, notices)...)
		if len(stored) > 0 {
			if err := mv.store.Append(mv.now(), stored...); err != nil {
				tr.Steps = append(tr.Steps, st)
				tr.Error = err.Error()
				return nil, &turn.TurnError{Stage: "store", Message: msg, Err: err}
			}
		}
		*answered = res // a turn counts once its first answer is stored
		for _, m := range stored {
			if m.Text == "" || m.Role != store.RoleAssistant {
				continue
			}
			res.Replies = append(res.Replies, m)
			if l.Reply != nil {
				l.Reply(m)
			}
		}
		if len(calls) == 0 {
			tr.Steps = append(tr.Steps, st)
			break
		}

		// The answer is out; now the tools run.
		appended := []llm.Message{{Role: llm.RoleAssistant, Content: resp.Content, ToolCalls: calls}}
		var results []*store.Message
		var limitNotes []turn.LimitNotice
		quiet := true // every call only reported: no answer is owed
		for _, c := range calls {
			var r turn.ToolResult
			refusal := ""
			if mv.limits != nil {
				var notes []turn.LimitNotice
				refusal, notes = mv.limits.ToolCall(q, c)
				limitNotes = append(limitNotes, notes...)
			}
			if refusal != "" {
				r = turn.ToolResult{Text: refusal, IsError: true}
			} else {
				r = mv.tools.Call(ctx, q, c)
			}
			st.Results = append(st.Results, r)
			quiet = quiet && r.Quiet
			if c.Name == turn.UsageToolName && !r.IsError {
				usage.Path = turn.UsageTool
			}
			appended = append(appended, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, ToolName: c.Name, Content: notation.ToolLine(c.Name, r.Text)})
			results = append(results, &store.Message{
				Channel: msg.Channel, Role: store.RoleTool, User: c.Name, Kind: msg.Kind, Text: r.Text, Tokens: mv.count.Count(r.Text),
				ReplyTo: msg.ID, Step: step, ToolCallID: c.ID, ToolName: c.Name, Area: area(r),
			})
		}
		st.Limits = append(st.Limits, limitNotes...)
		results = append(results, mv.limitMessages(msg, step, limitNotes)...)
		if err := mv.store.Append(mv.now(), results...); err != nil {
			mv.log.Warn("store tool results", "channel", msg.Channel, "err", err)
		}
		st.Appended = appended
		tr.Steps = append(tr.Steps, st)
		conv = append(conv, appended...)
		if quiet {
			st := &tr.Steps[len(tr.Steps)-1]
			st.Note = joinNote(st.Note, "every call was a report; no further model request")
			break
		}
	}
	return res, nil
}

// liveStream is the stream a turn's model calls write to: the listener's,
// and the journal's live text when LiveText is on (nil: no streaming).
func (mv *MainVirtual) liveStream(msg *store.Message, listen func(turn.StreamEvent) error) func(turn.StreamEvent) error {
	if !mv.live && listen == nil {
		return nil
	}
	return func(e turn.StreamEvent) error {
		ev := journal.New(journal.ReplyDelta, msg.Channel, journal.Delta{MessageID: msg.ID, Text: e.Text, Break: e.Break})
		ev.Proactive = msg.Proactive
		mv.journal.PostTransient(ev)
		if listen != nil {
			return listen(e)
		}
		return nil
	}
}

// turnDone posts how the turn ended on the journal (journal.TurnDone):
// answered (res, its first answer stored), failed or interrupted (err
// says which), and how long it took. Main-observer's work after a turn,
// every observer of "after a response" and the metrics start from it. A
// proactive turn says so, and names the part that began it, so an
// observer's own speech does not wake it again.
func (mv *MainVirtual) turnDone(ctx context.Context, msg *store.Message, q turn.Query, res *turn.Result, err error) {
	t := journal.Turn{MessageID: msg.ID, Outcome: journal.TurnAnswered, Millis: mv.now().Sub(q.Now).Milliseconds(),
		Kind: q.Kind, Speaker: q.Speaker, SpeakerID: q.SpeakerID, Replies: []string{}}
	if q.Reader != nil { // the owner by id, as the turn's reader resolved it
		t.Owner = q.Reader.Owner
	}
	if p := q.For; p != nil { // a proactive turn acts for its principal
		t.Speaker, t.SpeakerID, t.Owner, t.Component = p.Speaker, p.SpeakerID, p.Owner, p.Component
	}
	switch {
	case res != nil:
		t.UsagePath, t.Used, t.Maybe = res.Usage.Path, res.Usage.Used, res.Usage.Maybe
		for _, m := range res.Replies {
			if m != res.Greeting { // the persona's greeting is not the answer
				t.Replies = append(t.Replies, m.Text)
			}
		}
		if res.Err != nil {
			t.Error = res.Err.Error()
		}
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		t.Outcome = journal.TurnInterrupted
	default:
		t.Outcome = journal.TurnFailed
	}
	if res == nil && err != nil {
		t.Error = err.Error()
	}
	ev := journal.New(journal.TurnDone, msg.Channel, t)
	ev.Proactive, ev.Origin = msg.Proactive, journal.OriginOf(ctx)
	mv.journal.Post(ev)
}

// limitMessages are the limit-process notices as platform messages.
func (mv *MainVirtual) limitMessages(in *store.Message, step int, notices []turn.LimitNotice) []*store.Message {
	var out []*store.Message
	for _, n := range notices {
		out = append(out, &store.Message{Channel: in.Channel, Role: store.RoleSystem, User: n.From, Kind: in.Kind,
			Text: n.Text, Tokens: mv.count.Count(n.Text), ReplyTo: in.ID, Step: step})
	}
	return out
}

// answerMessages turns one model output into the messages to store: one per
// "@br" part, its @last references expanded to the quoted messages; an assistant record of the tool calls when the output had no
// words; or, on the first step, the agent's choice to stay silent.
func (mv *MainVirtual) answerMessages(in *store.Message, step int, out Output, calls []llm.ToolCall, refs *lastRefs) []*store.Message {
	agent := mv.AgentName()
	mk := func(part int, text string) *store.Message {
		text, quotes := refs.expand(text)
		return &store.Message{Channel: in.Channel, Role: store.RoleAssistant, User: agent, Kind: in.Kind, Text: text,
			Tokens: mv.count.Count(text), ReplyTo: in.ID, Step: step, Part: part, Quotes: quotes}
	}
	var msgs []*store.Message
	for i, p := range out.Parts {
		msgs = append(msgs, mk(i, p))
	}
	switch {
	case len(msgs) > 0:
	case len(calls) > 0:
		msgs = append(msgs, mk(0, ""))
	case step == 0:
		m := mk(0, "")
		m.Empty = true
		msgs = append(msgs, m)
	}
	if len(calls) > 0 && len(msgs) > 0 {
		last := msgs[len(msgs)-1]
		for _, c := range calls {
			last.ToolCalls = append(last.ToolCalls, store.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
	}
	return msgs
}

// call runs one model call, streamed through a streamFilter when the
// listener wants live text; after an earlier step's answer the new text
// opens with a Break.
func (mv *MainVirtual) call(ctx context.Context, req llm.Request, stream func(turn.StreamEvent) error, after bool, refs *lastRefs) (*llm.Response, error) {
	if stream == nil {
		return mv.llm.Chat(ctx, req)
	}
	f := newStreamFilter(stream)
	f.broke = after
	f.expand = func(ref string) string { s, _ := refs.expand(ref); return s }
	resp, err := mv.llm.Stream(ctx, req, func(d llm.Delta) error {
		if d.Content == "" {
			return nil
		}
		return f.write(d.Content)
	})
	if err != nil {
		return nil, err
	}
	if err := f.close(); err != nil {
		return nil, err
	}
	return resp, nil
}

// withCallIDs gives every call a distinct id; some OpenAI-compatible servers
// send none or repeat them.
func withCallIDs(calls []llm.ToolCall, step int) []llm.ToolCall {
	seen := map[string]bool{}
	for i := range calls {
		if calls[i].ID == "" || seen[calls[i].ID] {
			calls[i].ID = fmt.Sprintf("call_%d_%d", step, i)
		}
		seen[calls[i].ID] = true
	}
	return calls
}
