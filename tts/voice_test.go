package tts_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/ttstest"
	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/tts"
)

// gated is a provider whose syntheses wait until the test opens their
// gate, so they can finish in any order.
type gated struct {
	mu    sync.Mutex
	gates map[string]chan struct{}
	fail  map[string]bool
	calls int
}

func newGated() *gated { return &gated{gates: map[string]chan struct{}{}, fail: map[string]bool{}} }

func (g *gated) gate(text string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gates[text] == nil {
		g.gates[text] = make(chan struct{})
	}
	return g.gates[text]
}

func (g *gated) open(text string) { close(g.gate(text)) }

func (g *gated) Name() string                 { return "gated" }
func (g *gated) VoiceOf(r tts.Request) string { return r.Language }
func (g *gated) Synthesize(ctx context.Context, r tts.Request) (tts.Audio, error) {
	g.mu.Lock()
	g.calls++
	fail := g.fail[r.Text]
	g.mu.Unlock()
	select {
	case <-g.gate(r.Text):
	case <-ctx.Done():
		return tts.Audio{}, ctx.Err()
	}
	if fail {
		return tts.Audio{}, &tts.Error{Provider: "gated", Unavailable: true, Msg: "server down"}
	}
	return tts.Audio{Data: ttstest.ToneWAV(r.Text, 8000), Type: "audio/wav"}, nil
}

type sink struct {
	mu  sync.Mutex
	got []tts.Speech
	ch  chan tts.Speech
}

func newSink() *sink { return &sink{ch: make(chan tts.Speech, 64)} }

func (s *sink) emit(sp tts.Speech) {
	s.mu.Lock()
	s.got = append(s.got, sp)
	s.mu.Unlock()
	s.ch <- sp
}

func (s *sink) next(t *testing.T) tts.Speech {
	t.Helper()
	select {
	case sp := <-s.ch:
		return sp
	case <-time.After(10 * time.Second):
		t.Fatal("no speech came")
	}
	return tts.Speech{}
}

func (s *sink) none(t *testing.T) {
	t.Helper()
	select {
	case sp := <-s.ch:
		t.Fatalf("unexpected speech %+v", sp)
	default:
	}
}

func TestVoiceSpeaksTheFirstSegmentWhileTheReplyStreams(t *testing.T) {
	g := newGated()
	out := newSink()
	v, err := tts.NewVoice(tts.Options{Provider: g, Channels: []string{"desktop", "qq:private:*"}, Emit: out.emit, Parallel: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if v.Begin("terminal", "m1") != nil {
		t.Fatal("an unvoiced channel has no utterance")
	}
	var nilU *tts.Utterance
	nilU.Text("x") // a nil utterance takes calls
	nilU.End()

	u := v.Begin("desktop", "m1")
	u.Text("你好，今天天气")
	u.Text("很好。こんにちは、")
	g.open("你好，今天天气很好。")
	first := out.next(t) // while the reply is still streaming
	if first.Text != "你好，今天天气很好。" || first.Language != "zh" || first.Seq != 0 || first.Turn != "m1" || first.Audio == "" || first.Millis == 0 {
		t.Fatalf("first speech %+v", first)
	}
	if a, ok := v.Audio(first.Audio[len("/api/v1/speech/"):]); !ok || a.Type != "audio/wav" {
		t.Fatal("the audio is not kept under its path")
	}
	u.Text("元気ですか？")
	u.Break()
	u.Text("I am fine, thank you very much. Bye")
	u.End()
	// The last segment is ready before the middle one: it waits its turn.
	g.open("Bye")
	g.open("I am fine, thank you very much.")
	out.none(t)
	g.open("こんにちは、元気ですか？")
	var langs []string
	for i := 1; i <= 3; i++ {
		sp := out.next(t)
		if sp.Seq != i {
			t.Fatalf("speech %d came as seq %d: %+v", i, sp.Seq, sp)
		}
		langs = append(langs, sp.Language)
	}
	if langs[0] != "ja" || langs[1] != "en" || langs[2] != "en" {
		t.Errorf("languages %v", langs)
	}

	// Its turn's stored replies are left to the utterance, also when they
	// come after End (the router delivers them a moment later); another
	// turn's stored message (a proactive one) is voiced itself.
	v.Outgoing("desktop", "m1", "m1-out", "should not be voiced twice")
	v.Outgoing("terminal", "m9", "m9-out", "not a voiced channel.")
	g.open("出来了。")
	v.Outgoing("qq:private:42", "m2", "m2-out", "出来了。")
	sp := out.next(t)
	if sp.Channel != "qq:private:42" || sp.Seq != 0 || sp.Text != "出来了。" {
		t.Errorf("proactive speech %+v", sp)
	}
	g.open("should not be voiced twice")
	v.Close() // every synthesis handed out is done
	out.none(t)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.calls != 5 {
		t.Errorf("%d syntheses, want 5: the streamed turn's stored reply was voiced again", g.calls)
	}
}

func TestVoiceLeavesALiveTurnToItsUtterance(t *testing.T) {
	g := newGated()
	out := newSink()
	v, _ := tts.NewVoice(tts.Options{Provider: g, Channels: []string{"desktop"}, Emit: out.emit})
	defer v.Close()
	u := v.Begin("desktop", "m1")
	u.Text("好的。")
	v.Outgoing("desktop", "m1", "m1-out", "好的。") // the stored reply of the streamed text
	u.End()
	g.open("好的。")
	out.next(t)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.calls != 1 {
		t.Errorf("%d syntheses, want 1", g.calls)
	}
}

func TestVoiceFailureKeepsTheText(t *testing.T) {
	g := newGated()
	g.fail["坏了。"] = true
	out := newSink()
	v, _ := tts.NewVoice(tts.Options{Provider: g, Channels: []string{"*"}, Emit: out.emit})
	defer v.Close()
	v.Outgoing("desktop", "m1", "m1-out", "坏了。好了。")
	g.open("坏了。")
	g.open("好了。")
	bad, good := out.next(t), out.next(t)
	if bad.Error == "" || bad.Audio != "" || bad.Text != "坏了。" {
		t.Errorf("failed segment %+v", bad)
	}
	if good.Error != "" || good.Audio == "" {
		t.Errorf("the next segment should still speak: %+v", good)
	}
}

func TestVoiceCachesByProviderVoiceAndText(t *testing.T) {
	g := newGated()
	g.open("一样。")
	v, _ := tts.NewVoice(tts.Options{Provider: g})
	defer v.Close()
	for range 3 {
		if _, err := v.Synthesize(context.Background(), packets.Segment{Text: "一样。", Language: "zh"}, ""); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := v.Synthesize(context.Background(), packets.Segment{Text: "一样。", Language: "ja"}, ""); err != nil {
		t.Fatal(err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.calls != 2 {
		t.Errorf("%d syntheses, want 2 (one per voice)", g.calls)
	}
}

func TestVoiceScriptCutsWholeMessages(t *testing.T) {
	g := newGated()
	for _, s := range []string{"嘿嘿", "Hello!"} {
		g.open(s)
	}
	out := newSink()
	var got []string
	v, _ := tts.NewVoice(tts.Options{Provider: g, Channels: []string{"desktop"}, Emit: out.emit,
		Scripted: func() bool { return true },
		Script: func(_ context.Context, channel, text string) ([]packets.Segment, error) {
			got = append(got, text)
			if text == "broken" {
				return nil, errors.New("the model is away")
			}
			return []packets.Segment{{Emotion: "happy", Language: "zh", Text: "嘿嘿"}, {Emotion: "", Text: "**Hello!**"}}, nil
		}})
	defer v.Close()
	u := v.Begin("desktop", "m1")
	u.Text("hello ")
	u.Text("there")
	u.End()
	a, b := out.next(t), out.next(t)
	if a.Emotion != "happy" || a.Text != "嘿嘿" || b.Text != "Hello!" || b.Emotion != "neutral" || b.Language != "en" {
		t.Errorf("scripted speech %+v %+v", a, b)
	}
	if len(got) != 1 || got[0] != "hello there" {
		t.Errorf("the script got %q, want the whole message", got)
	}
	// A failing script falls back to the rules.
	g.open("broken")
	v.Outgoing("desktop", "m2", "m2-out", "broken")
	if sp := out.next(t); sp.Text != "broken" || sp.Error != "" {
		t.Errorf("fallback %+v", sp)
	}
}

// TestVoiceStopsACutAnswerAtItsLastWholeSentence: a reply cut off
// mid-answer is voiced up to its last whole sentence; the half sentence
// after it is not said, and nothing more of the turn is.
func TestVoiceStopsACutAnswerAtItsLastWholeSentence(t *testing.T) {
	g := newGated()
	out := newSink()
	v, _ := tts.NewVoice(tts.Options{Provider: g, Channels: []string{"desktop"}, Emit: out.emit})
	defer v.Close()
	v.Delta("desktop", "m1", "The first sentence. And the sec", false)
	v.Cut("desktop", "m1")
	v.Delta("desktop", "m1", "ond half.", false) // nothing after the cut
	v.TurnDone("desktop", "m1")
	g.open("The first sentence.")
	if sp := out.next(t); sp.Text != "The first sentence." {
		t.Fatalf("voiced %q", sp.Text)
	}
	out.none(t)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.calls != 1 {
		t.Errorf("%d syntheses, want 1 (the half sentence was sent to the voice)", g.calls)
	}
}
