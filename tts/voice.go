package tts

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/cyan-agent/cyan/glob"
	"github.com/cyan-agent/cyan/packets"
)

// Speech is one voiced segment, ready to play: what the stream carries as a
// "speech" event. Its audio is at Audio (a path on the daemon); when the
// voice failed, Error says why and the text still shows.
type Speech struct {
	Channel string `json:"channel"`
	// Turn is the id of the message the reply answers.
	Turn string `json:"turn"`
	// Seq orders the speech of a channel (since the daemon started).
	Seq int `json:"seq"`
	packets.Segment
	Audio string `json:"audio,omitempty"`
	Type  string `json:"type,omitempty"`
	// Millis is how long the audio plays, when known (WAV).
	Millis int    `json:"ms,omitempty"`
	Error  string `json:"error,omitempty"`
}

// Clip is one synthesized segment.
type Clip struct {
	packets.Segment
	Key string
	Audio
}

// Options configure NewVoice.
type Options struct {
	Provider Provider
	// Cache keeps the audio (nil: a 64 MiB one).
	Cache *Cache
	// Channels are the voiced channels, as channel patterns (glob.Channel).
	Channels []string
	// Emit receives each segment of the voiced channels, in order per
	// channel. It must not block for long.
	Emit func(Speech)
	// AudioPath makes the path of a clip's audio (default
	// "/api/v1/speech/" + key).
	AudioPath func(key string) string
	// Script, when set and Scripted reports true, cuts a whole message into
	// segments (the speak prompt script); on its failure the rules do.
	Script   func(ctx context.Context, channel, text string) ([]packets.Segment, error)
	Scripted func() bool
	// Actions is what a reply's *actions* become (ActionsSkip when "").
	Actions string
	// Narrator is the voice of narrated actions (emotion Narration): a
	// voice name of the provider; "" keeps the provider's own (GPT-SoVITS
	// picks refs.narration by the emotion).
	Narrator string
	// Words, when set, gives the persona's emotion words for the rule
	// splitter ({emotion: [word, …]}).
	Words func() map[string][]string
	// Timeout bounds one synthesis from when its turn comes (default 60
	// s): waiting behind the segments before it does not count.
	Timeout time.Duration
	// Parallel is how many segments are synthesized at once (default:
	// the provider's Parallel, if it has one, else 2).
	Parallel int
	Logger   *slog.Logger
}

// Voice speaks what the companion says in the voiced channels: it cuts
// replies into segments as they stream, synthesizes them in parallel
// through the cache and hands them to Emit in order, the first while the
// rest of the reply is still being written. A failing voice never holds the
// text up: the segment is emitted with its error.
type Voice struct {
	o     Options
	log   *slog.Logger
	cache *Cache
	turns *turns

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	actions atomic.Value // string: Options.Actions until SetActions

	mu       sync.Mutex
	chans    map[string]*channelState
	failing  bool
	closed   bool
	lastFail string
}

type channelState struct {
	seq  int           // the next Speech.Seq
	tail chan struct{} // closed once everything handed out so far was emitted
	live map[string]*Utterance
	// spoken are the newest turns a live utterance voiced: their stored
	// messages, which reach Outgoing a moment later, are not voiced again.
	spoken []string
	// speakers are the newest turns that called speak: their text is not
	// voiced (the speak segments are what the voice says).
	speakers []string
	// keys are the newest messages voiced whole (by Outgoing or Speak),
	// so the same one is not voiced twice.
	keys []string
}

// remember appends s to a bounded list.
func remember(list []string, s string) []string {
	list = append(list, s)
	if len(list) > spokenKept {
		list = list[len(list)-spokenKept:]
	}
	return list
}

// spokenKept bounds channelState.spoken.
const spokenKept = 64

// NewVoice checks the options and makes the voice. Close stops it.
func NewVoice(o Options) (*Voice, error) {
	if o.Provider == nil {
		return nil, errors.New("tts: a voice needs a provider")
	}
	if o.Cache == nil {
		o.Cache = NewCache(64 << 20)
	}
	if o.AudioPath == nil {
		o.AudioPath = func(key string) string { return "/api/v1/speech/" + key }
	}
	if o.Timeout <= 0 {
		o.Timeout = 60 * time.Second
	}
	if p, ok := o.Provider.(interface{ Parallel() int }); ok && o.Parallel <= 0 {
		o.Parallel = p.Parallel()
	}
	if o.Parallel <= 0 {
		o.Parallel = 2
	}
	if o.Emit == nil {
		o.Emit = func(Speech) {}
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if o.Actions == "" {
		o.Actions = ActionsSkip
	}
	if err := checkActions(o.Actions); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	v := &Voice{o: o, log: log, cache: o.Cache, turns: newTurns(o.Parallel),
		ctx: ctx, cancel: cancel, chans: map[string]*channelState{}}
	v.actions.Store(o.Actions)
	return v, nil
}

// Actions is what a reply's *actions* become now: tts.actions, or what
// SetActions chose since.
func (v *Voice) Actions() string { return v.actions.Load().(string) }

// SetActions changes what the *actions* of replies begun from now on
// become (the page's settings): skip, speak or narrate. It lasts until the
// daemon stops; tts.actions is the mode at start.
func (v *Voice) SetActions(mode string) error {
	if err := checkActions(mode); err != nil {
		return err
	}
	v.actions.Store(mode)
	return nil
}

func checkActions(mode string) error {
	switch mode {
	case ActionsSkip, ActionsSpeak, ActionsNarrate:
		return nil
	}
	return fmt.Errorf("tts: actions %q is not skip, speak or narrate", mode)
}

// Provider is the voice's provider.
func (v *Voice) Provider() Provider { return v.o.Provider }

// Close stops every synthesis and waits for them.
func (v *Voice) Close() {
	v.mu.Lock()
	v.closed = true
	v.mu.Unlock()
	v.cancel()
	v.wg.Wait()
}

// Voiced reports whether replies in channel are spoken.
func (v *Voice) Voiced(channel string) bool {
	for _, p := range v.o.Channels {
		if glob.Channel(p, channel) {
			return true
		}
	}
	return false
}

// Audio returns kept audio by its key (the last part of its path).
func (v *Voice) Audio(key string) (Audio, bool) { return v.cache.Get(key) }

// Synthesize voices one segment through the cache. voice overrides the
// provider's voice ("" keeps it).
func (v *Voice) Synthesize(ctx context.Context, s packets.Segment, voice string) (Clip, error) {
	return v.synthesize(ctx, s, voice, v.turns.take())
}

// synthesize voices one segment with its ticket in the voice's queue: the
// synthesis waits its turn, then has Options.Timeout; one whose caller
// left before its turn is not made, one begun is made and kept. A clip that is only
// silence (GPT-SoVITS's api_v2 answers a failed inference with 200 and a
// second of silence) is a failure: skipped, and never kept.
func (v *Voice) synthesize(ctx context.Context, s packets.Segment, voice string, tk *ticket) (Clip, error) {
	defer tk.leave()
	r := Request{Text: s.Text, Language: s.Language, Emotion: s.Emotion, Voice: voice}
	key := Key(v.o.Provider.Name(), v.o.Provider.VoiceOf(r), r.Text)
	a, err := v.cache.Do(ctx, key, func() (Audio, error) {
		defer tk.done()
		if err := tk.wait(v.ctx); err != nil {
			return Audio{}, err
		}
		if err := ctx.Err(); err != nil {
			return Audio{}, err // its caller left while it waited
		}
		sctx, cancel := context.WithTimeout(v.ctx, v.o.Timeout)
		defer cancel()
		a, err := v.o.Provider.Synthesize(sctx, r)
		if err == nil && Silent(a) {
			err = &Error{Provider: v.o.Provider.Name(), Msg: "the voice answered with silence only (a failed synthesis); this segment is skipped"}
		}
		return a, err
	})
	if err != nil {
		return Clip{Segment: s}, err
	}
	return Clip{Segment: s, Key: key, Audio: a}, nil
}

// Say voices segments in order (for POST /api/v1/speech and cyan say):
// the first failure is the error.
func (v *Voice) Say(ctx context.Context, segs []packets.Segment, voice string) ([]Clip, error) {
	clips := make([]Clip, 0, len(segs))
	var err error
	v.Each(ctx, segs, voice, func(i int, c Clip, e error) bool {
		if e != nil {
			err = fmt.Errorf("segment %d (%q): %w", i+1, segs[i].Text, e)
			return false
		}
		clips = append(clips, c)
		return true
	})
	if err == nil && len(clips) < len(segs) {
		err = ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	return clips, nil
}

// Each voices segments as Say does and hands each clip, or its error, to
// each in order, as soon as it and every one before it are done: the first
// while the rest are still being made (POST /api/v1/speech's stream). When
// each returns false, or ctx ends, the segments not yet made are given up.
// Each returns when each has had its last call.
func (v *Voice) Each(ctx context.Context, segs []packets.Segment, voice string, each func(i int, c Clip, err error) bool) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	type result struct {
		c   Clip
		err error
	}
	results := make([]chan result, len(segs))
	for i, s := range segs {
		results[i] = make(chan result, 1)
		tk := v.turns.take() // in order: the first segments are made first
		wg.Go(func() {
			c, err := v.synthesize(ctx, s, voice, tk)
			results[i] <- result{c, err}
		})
	}
	for i, ch := range results {
		var r result
		select {
		case r = <-ch:
		case <-ctx.Done():
			return
		}
		if !each(i, r.c, r.err) {
			return
		}
	}
}

// Begin starts voicing the reply to turn in channel as it streams; nil when
// the channel is not voiced (the nil Utterance takes every call and does
// nothing). While it is open, Outgoing leaves that turn's messages to it.
func (v *Voice) Begin(channel, turn string) *Utterance {
	if !v.Voiced(channel) {
		return nil
	}
	u := v.newUtterance(channel, turn)
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return nil
	}
	st := v.state(channel)
	st.live[turn] = u
	return u
}

// Outgoing voices a stored outgoing message (a reply that was not
// streamed, a greeting, a proactive message) unless a live utterance of its
// turn already does, its turn called speak, or key (the message's id) was
// voiced before.
func (v *Voice) Outgoing(channel, turn, key, text string) {
	if !v.Voiced(channel) || strings.TrimSpace(text) == "" {
		return
	}
	v.mu.Lock()
	st := v.state(channel)
	_, live := st.live[turn]
	skip := live || turn != "" && (slices.Contains(st.spoken, turn) || slices.Contains(st.speakers, turn)) ||
		key != "" && slices.Contains(st.keys, key)
	if !skip && key != "" {
		st.keys = remember(st.keys, key)
	}
	v.mu.Unlock()
	if skip {
		return
	}
	u := v.newUtterance(channel, turn)
	u.Text(text)
	u.end(false)
}

func (v *Voice) state(channel string) *channelState {
	st := v.chans[channel]
	if st == nil {
		done := make(chan struct{})
		close(done)
		st = &channelState{tail: done, live: map[string]*Utterance{}}
		v.chans[channel] = st
	}
	return st
}

func (v *Voice) newUtterance(channel, turn string) *Utterance {
	scripted := v.o.Script != nil && v.o.Scripted != nil && v.o.Scripted()
	var words map[string][]string
	if v.o.Words != nil {
		words = v.o.Words()
	}
	return &Utterance{v: v, channel: channel, turn: turn, scripted: scripted,
		split: Splitter{FirstClause: 8, Actions: v.Actions(), Words: words}}
}

// enqueue synthesizes segs and emits them after everything handed out
// before in the channel. text: they are the turn's text (dropped when the
// turn calls speak before they are emitted).
func (v *Voice) enqueue(channel, turn string, segs []packets.Segment, text bool) {
	if len(segs) == 0 {
		return
	}
	v.later(channel, turn, text, func() []packets.Segment { return segs })
}

// later takes the channel's next place in order at once, and fills it with
// the segments segs makes (which may take a model call) in a goroutine.
func (v *Voice) later(channel, turn string, text bool, segs func() []packets.Segment) {
	v.mu.Lock()
	if v.closed {
		v.mu.Unlock()
		return
	}
	st := v.state(channel)
	prev, done := st.tail, make(chan struct{})
	st.tail = done
	v.wg.Add(1)
	v.mu.Unlock()
	go func() {
		defer v.wg.Done()
		defer close(done)
		v.play(channel, turn, text, v.guard(segs), prev)
	}()
}

// guard runs segs, turning a panic into no segments.
func (v *Voice) guard(segs func() []packets.Segment) (out []packets.Segment) {
	defer func() {
		if p := recover(); p != nil {
			v.log.Error("voice panicked", "panic", p, "stack", string(debug.Stack()))
			out = nil
		}
	}()
	return segs()
}

// play synthesizes segs in parallel and, once prev is closed, emits them
// in order (text: unless the turn has called speak meanwhile).
func (v *Voice) play(channel, turn string, text bool, segs []packets.Segment, prev chan struct{}) {
	results := make([]chan Speech, len(segs))
	for i, s := range segs {
		ch := make(chan Speech, 1)
		results[i] = ch
		tk := v.turns.take() // in order: the first segments are made first
		v.wg.Add(1)
		go func() {
			defer v.wg.Done()
			ch <- v.speech(channel, turn, s, tk)
		}()
	}
	select {
	case <-prev:
	case <-v.ctx.Done():
		return
	}
	for _, ch := range results {
		select {
		case sp := <-ch:
			if text && v.silenced(channel, turn) {
				continue
			}
			v.mu.Lock()
			st := v.state(channel)
			sp.Seq = st.seq
			st.seq++
			v.mu.Unlock()
			if v.ctx.Err() != nil {
				return
			}
			v.o.Emit(sp)
		case <-v.ctx.Done():
			return
		}
	}
}

// speech synthesizes one segment into a Speech (with its error, if any).
func (v *Voice) speech(channel, turn string, s packets.Segment, tk *ticket) (sp Speech) {
	sp = Speech{Channel: channel, Turn: turn, Segment: s}
	defer func() {
		if p := recover(); p != nil {
			v.log.Error("voice panicked", "panic", p, "stack", string(debug.Stack()))
			sp.Error = "the voice failed (see the daemon's log)"
		}
	}()
	voice := ""
	if s.Emotion == Narration {
		voice = v.o.Narrator
	}
	clip, err := v.synthesize(v.ctx, s, voice, tk)
	if err != nil {
		sp.Error = err.Error()
		v.failed(err)
		return sp
	}
	v.recovered()
	sp.Audio, sp.Type = v.o.AudioPath(clip.Key), clip.Type
	if w, err := ParseWAV(clip.Data); err == nil {
		sp.Millis = int(w.Duration().Milliseconds())
	}
	return sp
}

// failed logs a failing voice once, until it works again.
func (v *Voice) failed(err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	v.mu.Lock()
	first := !v.failing || v.lastFail != err.Error()
	v.failing, v.lastFail = true, err.Error()
	v.mu.Unlock()
	if first {
		v.log.Warn("the voice fails; replies show as text only until it works", "err", err)
	}
}

func (v *Voice) recovered() {
	v.mu.Lock()
	was := v.failing
	v.failing, v.lastFail = false, ""
	v.mu.Unlock()
	if was {
		v.log.Info("the voice works again")
	}
}

// Utterance is one reply being voiced as it streams. Its methods may be
// called on a nil Utterance (an unvoiced channel) and do nothing. It is
// safe for concurrent use.
type Utterance struct {
	v             *Voice
	channel, turn string
	scripted      bool

	mu    sync.Mutex
	split Splitter
	text  strings.Builder // the current message, when scripted
	ended bool
}

// silence drops what the utterance holds and ignores its later text (the
// turn called speak).
func (u *Utterance) silence() {
	if u == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.ended = true
	u.split = Splitter{}
	u.text.Reset()
}

// Text feeds streamed text.
func (u *Utterance) Text(delta string) {
	if u == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.ended {
		return
	}
	if u.scripted {
		u.text.WriteString(delta)
		return
	}
	u.v.enqueue(u.channel, u.turn, u.split.Feed(delta), true)
}

// Break ends one outgoing message of the reply ("@br").
func (u *Utterance) Break() {
	if u == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.ended {
		u.flush()
	}
}

// End ends the reply: what is held is voiced, and Outgoing takes the
// turn's messages again.
func (u *Utterance) End() {
	if u == nil {
		return
	}
	u.end(true)
}

func (u *Utterance) end(live bool) {
	u.mu.Lock()
	if !u.ended {
		u.flush()
		u.ended = true
	}
	u.mu.Unlock()
	if live {
		u.v.mu.Lock()
		if st := u.v.chans[u.channel]; st != nil && st.live[u.turn] == u {
			delete(st.live, u.turn)
			st.spoken = remember(st.spoken, u.turn)
		}
		u.v.mu.Unlock()
	}
}

// Cut ends an utterance whose text was cut off mid-answer: the sentences
// already whole are voiced (or queued), the unfinished one is not.
func (u *Utterance) Cut() {
	if u == nil {
		return
	}
	u.mu.Lock()
	if !u.ended {
		if u.scripted {
			text := u.text.String()
			u.text.Reset()
			u.text.WriteString(text[:lastSentenceEnd(text)])
			u.flush()
		}
		u.split = Splitter{}
		u.ended = true
	}
	u.mu.Unlock()
	u.end(true)
}

// lastSentenceEnd is the byte offset just after the last sentence mark or
// line break of s (0 when there is none).
func lastSentenceEnd(s string) int {
	i := strings.LastIndexAny(s, ".!?。！？…\n")
	if i < 0 {
		return 0
	}
	_, n := utf8.DecodeRuneInString(s[i:])
	return i + n
}

// flush voices what is held; the caller holds u.mu.
func (u *Utterance) flush() {
	if !u.scripted {
		u.v.enqueue(u.channel, u.turn, u.split.Flush(), true)
		return
	}
	text := u.text.String()
	u.text.Reset()
	if strings.TrimSpace(Speakable(Unmark(text, u.split.Actions))) == "" {
		return
	}
	u.v.later(u.channel, u.turn, true, func() []packets.Segment { return u.v.script(u.channel, text) })
}

// script cuts text with the speak script, or by the rules when it fails.
func (v *Voice) script(channel, text string) []packets.Segment {
	ctx, cancel := context.WithTimeout(v.ctx, v.o.Timeout)
	segs, err := v.o.Script(ctx, channel, text)
	cancel()
	if err != nil || len(segs) == 0 {
		v.log.Warn("the speak script failed; the rules cut the text instead", "channel", channel, "err", err)
		sp := Splitter{Actions: v.Actions()}
		return append(sp.Feed(text), sp.Flush()...)
	}
	return cleanSegments(segs)
}
