package mainvirtual

import (
	"context"
	"encoding/json"
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

	offered := mv.tools.Offer(q)
	packet, err := mv.asm.assemble(ctx, q, offered, 0)
	if err != nil {
		tr.Error = err.Error()
		return nil, &turn.TurnError{Stage: "assemble", Message: msg, Err: err}
	}
	tr.Packet = packet
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
	refitted := false

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
		resp, flow, cut, err := mv.call(ctx, q, llm.Request{Messages: conv, Tools: tools, Temperature: mv.temp, MaxTokens: mv.maxTok}, stream, len(res.Replies) > 0, refs)
		st.Millis = time.Since(began).Milliseconds()
		if err != nil && step == 0 && !refitted && llm.KindOf(err) == llm.ContextLength {
			// The server says the prompt does not fit: assemble it again
			// within what it said (oldest conversation first, then the
			// pulled info, then the lorebook) and try once more.
			refitted = true
			limit := mv.asm.refit(err, packet)
			if np, aerr := mv.asm.assemble(ctx, q, offered, limit); aerr == nil {
				st.Error = err.Error()
				st.Note = fmt.Sprintf("the server refused the prompt of about %d tokens as too long; it was assembled again within %d tokens and sent once more", packet.Tokens, limit)
				tr.Steps = append(tr.Steps, st)
				packet, tr.Packet = np, np
				np.Tools = offered
				conv = np.Messages
				step--
				continue
			}
		}
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
		st.Withheld, st.Cut = strings.TrimSpace(flow.clean.withheld.String()), cut
		late := false
		if !flow.clean.sawThink && cut == "" {
			_, _, late = llm.CutOpenedThink(resp.Content)
		}
		switch {
		case flow.clean.sawThink || late:
			mv.learnThinks(true) // the template opens this model's reasoning: hold the next streams
		case cut == "" && strings.TrimSpace(resp.Content) != "":
			mv.learnThinks(false) // a whole answer without it: the next streams go out as they come
		}
		if late {
			// The reasoning was shown before its "</think>" came; the
			// stored copy keeps only what followed it.
			st.Note = joinNote(st.Note, "a bare </think> came after text was shown; the stored answer is what followed it")
			if answer, _, ok := llm.CutOpenedThink(resp.Content); ok {
				again := newOutflow(agent, false, nil, nil, refs.expand)
				if sl, ok := mv.limits.(StreamLimiter); ok {
					again.limit = sl.Stream(q)
				}
				if again.write(answer) == nil && again.close() == nil {
					flow = again
				}
			}
		}
		sent := resp // the answer as the model meant it: no late reasoning
		if late {
			if answer, _, ok := llm.CutOpenedThink(resp.Content); ok {
				cp := *resp
				cp.Content = answer
				sent = &cp
			}
		}
		calls, content := sent.ToolCalls, sent.Content
		if len(tools) > 0 {
			calls, content, st.Repairs = repairCalls(sent, tools)
			if content != sent.Content && cut == "" {
				// A call the model wrote as text is not part of the
				// answer: what is sent and kept is the rest.
				again := newOutflow(agent, false, nil, nil, refs.expand)
				if sl, ok := mv.limits.(StreamLimiter); ok {
					again.limit = sl.Stream(q)
				}
				if again.write(content) == nil && again.close() == nil {
					flow = again
				}
			}
		}
		if cut != "" {
			calls = nil // the calls of a cut answer are not whole
			tr.Error = cut
		}
		if len(tools) == 0 && len(calls) > 0 {
			st.Note = fmt.Sprintf("ignored %d tool call(s): no tools were offered at this step", len(calls))
			calls = nil
		}
		calls = withCallIDs(calls, step)
		st.ToolCalls = calls

		out := SplitOutput(content, agent)
		merge(&usage, out.Usage)
		out.Parts, out.Empty = flow.parts, len(flow.parts) == 0
		var notices []turn.LimitNotice
		switch sl, ok := mv.limits.(StreamLimiter); {
		case ok:
			out.Parts, notices = sl.Finish(q, flow.limit, out.Parts, resp.Usage)
		case mv.limits != nil:
			out.Parts, notices = mv.limits.Output(q, out.Parts, resp.Usage)
		}
		st.Limits = append(st.Limits, notices...)
		st.Replies = append(st.Replies, out.Parts...)
		st.Empty = out.Empty && len(calls) == 0
		stored := mv.answerMessages(msg, step, out, flow.quotes, calls)
		for _, m := range stored {
			m.Proactive = msg.Proactive
			m.Incomplete = cut != "" && m.Text != ""
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
		if cut != "" {
			tr.Steps = append(tr.Steps, st)
			break
		}
		if len(calls) == 0 {
			tr.Steps = append(tr.Steps, st)
			break
		}

		// The answer is out; now the tools run.
		// The model reads back what was sent, not what it wrote: no
		// reasoning, forged line or removed text enters the conversation.
		appended := []llm.Message{{Role: llm.RoleAssistant, Content: strings.Join(out.Parts, "\n"+notation.Break+"\n"), ToolCalls: calls}}
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
			switch {
			case refusal != "":
				r = turn.ToolResult{Text: refusal, IsError: true}
			case !argsReadable(c.Arguments):
				r = turn.ToolResult{Text: badArgsResult(c), IsError: true}
			default:
				r = mv.tools.Call(ctx, q, c)
				if c.Name == speakTool {
					r.Text = mv.policeSpeech(q, r.Text)
				}
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
		ev := journal.New(journal.ReplyDelta, msg.Channel, journal.Delta{MessageID: msg.ID, Text: e.Text, Break: e.Break, Cut: e.Cut})
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
// message the outflow released (its @last references already expanded,
// quotes the ids each quoted); an assistant record of the tool calls when
// the output had no words; or, on the first step, the agent's choice to
// stay silent.
func (mv *MainVirtual) answerMessages(in *store.Message, step int, out Output, quotes [][]string, calls []llm.ToolCall) []*store.Message {
	agent := mv.AgentName()
	mk := func(part int, text string) *store.Message {
		var q []string
		if part < len(quotes) {
			q = quotes[part]
		}
		return &store.Message{Channel: in.Channel, Role: store.RoleAssistant, User: agent, Kind: in.Kind, Text: text,
			Tokens: mv.count.Count(text), ReplyTo: in.ID, Step: step, Part: part, Quotes: q}
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

// call runs one model call and takes its output through an outflow, the
// one way out: streamed when the listener wants live text (after an
// earlier step's answer the new text opens with a Break), whole otherwise.
// A stream that ends before its finish (the server stopped mid-answer) is
// asked again once when nothing was shown yet; otherwise the shown part
// is the answer, cut says why, and the live reader is told.
func (mv *MainVirtual) call(ctx context.Context, q turn.Query, req llm.Request, stream func(turn.StreamEvent) error, after bool, refs *lastRefs) (resp *llm.Response, flow *outflow, cut string, err error) {
	newFlow := func(emit func(turn.StreamEvent) error) *outflow {
		var limit turn.TextLimit
		if sl, ok := mv.limits.(StreamLimiter); ok {
			limit = sl.Stream(q)
		}
		f := newOutflow(mv.AgentName(), mv.expectThink(), limit, emit, refs.expand)
		f.after = after
		return f
	}
	if stream == nil {
		resp, err := mv.llm.Chat(ctx, req)
		if err != nil {
			return nil, nil, "", err
		}
		flow := newFlow(nil)
		if err := flow.write(resp.Content); err != nil {
			return nil, nil, "", err
		}
		return resp, flow, "", flow.close()
	}
	for try := 0; ; try++ {
		flow := newFlow(stream)
		var raw, reasoning strings.Builder
		resp, err := mv.llm.Stream(ctx, req, func(d llm.Delta) error {
			reasoning.WriteString(d.Reasoning)
			if d.Content == "" {
				return nil
			}
			raw.WriteString(d.Content)
			return flow.write(d.Content)
		})
		if err == nil {
			return resp, flow, "", flow.close()
		}
		if ctx.Err() != nil || flow.err != nil {
			return nil, nil, "", err
		}
		var c *llm.CutError
		if !flow.shown {
			if errors.As(err, &c) && try == 0 {
				mv.log.Warn("the model's stream ended before its finish; asking again", "err", err)
				continue
			}
			return nil, nil, "", err
		}
		// The shown part is the answer, marked incomplete; what the
		// outflow still held was never shown and goes nowhere.
		flow.endPartShown()
		flow.cut(err.Error())
		return &llm.Response{Content: raw.String(), Reasoning: strings.TrimSpace(reasoning.String())}, flow, err.Error(), nil
	}
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

// expectThink reports whether a stream is held until its "</think>" (or
// its end), because the model may write reasoning whose "<think>" its
// chat template opened: one of its answers had a bare "</think>" (since
// it was first used against this server, restarts included: facts), its
// name is one of the families that do so (QwQ, DeepSeek-R1 and its
// distills, Qwen3-…-Thinking), or it is unknown — no whole answer of it
// was seen yet. The first answer of a model never used before therefore
// arrives whole, once; it decides the model's fact: a bare "</think>"
// holds the model's streams from then on, an answer without one lets
// them go out as they come. Nothing a model writes before "</think>" is
// ever shown live.
func (mv *MainVirtual) expectThink() bool {
	if mv.thinks.Load() || !mv.plain.Load() {
		return true
	}
	d := strings.ToLower(mv.llm.Describe())
	for _, family := range []string{"qwq", "deepseek-r1", "-r1-", "r1-distill", "thinking"} {
		if strings.Contains(d, family) {
			return true
		}
	}
	return false
}

// learnThinks records whether the model's chat template opens its
// reasoning (thinks) or not, in memory and, when it changes, in the store
// (facts), so that a restart knows it too. Once a bare "</think>" was
// seen the model stays one that thinks: a later answer without one (a
// short reply, reasoning turned off for a turn) does not undo it.
func (mv *MainVirtual) learnThinks(thinks bool) {
	switch {
	case thinks:
		mv.plain.Store(false)
		if !mv.thinks.Swap(true) {
			mv.facts.putThinks(true)
		}
	case !mv.thinks.Load() && !mv.plain.Swap(true):
		mv.facts.putThinks(false)
	}
}

// speakTool is the tool whose result the voice says (package tools'
// "speak").
const speakTool = "speak"

// policeSpeech passes the segments of a speak result — speech the voice
// will say — through the limit-process, as every outgoing text is: a
// forbidden pattern is removed from them, and a segment the limits
// leave empty is dropped. Any other result is returned as it is.
func (mv *MainVirtual) policeSpeech(q turn.Query, text string) string {
	sl, ok := mv.limits.(StreamLimiter)
	if !ok {
		return text
	}
	segs, ok := packets.ParseSpeech(text)
	if !ok {
		return text
	}
	limit := sl.Stream(q)
	kept := []packets.Segment{}
	for _, s := range segs {
		s.Text = strings.TrimSpace(limit.Write(s.Text) + limit.End())
		if s.Text != "" {
			kept = append(kept, s)
		}
	}
	b, err := json.Marshal(map[string]any{"speech": kept})
	if err != nil {
		return text
	}
	return string(b)
}
