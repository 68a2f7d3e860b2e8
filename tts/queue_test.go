package tts

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cyan-agent/cyan/packets"
)

// oneAtATime is a provider as GPT-SoVITS's api_v2 runs: one synthesis at
// a time (its TTS pipeline holds a lock), each taking perClip; the text
// "fail" answers 200 with a second of 16 kHz silence, as api_v2 does when
// inference fails.
type oneAtATime struct {
	mu      chanMutex
	perClip time.Duration
	order   []string
	calls   map[string]int
}

func (p *oneAtATime) Name() string           { return "one-at-a-time" }
func (p *oneAtATime) VoiceOf(Request) string { return "v" }
func (p *oneAtATime) Synthesize(ctx context.Context, r Request) (Audio, error) {
	p.mu.lock()
	defer p.mu.unlock()
	p.order = append(p.order, r.Text)
	if p.calls == nil {
		p.calls = map[string]int{}
	}
	p.calls[r.Text]++
	select {
	case <-time.After(p.perClip):
	case <-ctx.Done():
		return Audio{}, ctx.Err()
	}
	if r.Text == "fail" {
		return Audio{Data: PCMWAV(make([]byte, 32000), 16000, 1), Type: "audio/wav"}, nil
	}
	pcm := make([]byte, 3200)
	for i := range pcm {
		pcm[i] = byte(i * 7)
	}
	return Audio{Data: PCMWAV(pcm, 32000, 1), Type: "audio/wav"}, nil
}

// chanMutex is a lock a synctest bubble sees as durably blocking (a
// sync.Mutex is not), so the bubble's clock moves on while clips queue.
type chanMutex struct {
	once sync.Once
	c    chan struct{}
}

func (m *chanMutex) lock() {
	m.once.Do(func() { m.c = make(chan struct{}, 1) })
	m.c <- struct{}{}
}

func (m *chanMutex) unlock() { <-m.c }

// A reply of 30 sentences against a server that makes one clip at a time
// in 2.4 s: every sentence is voiced, in order, though the whole takes 72 s
// and one synthesis may take at most 10 s — the timeout starts when a
// sentence's turn comes. (Before, all 30 started their 60 s at once and
// the later ones were lost.)
func TestALongReplyIsVoicedWholeAgainstAOneAtATimeServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &oneAtATime{perClip: 2400 * time.Millisecond}
		var mu sync.Mutex
		var got []Speech
		v, err := NewVoice(Options{Provider: p, Timeout: 10 * time.Second, Parallel: 2, Emit: func(s Speech) {
			mu.Lock()
			got = append(got, s)
			mu.Unlock()
		}})
		if err != nil {
			t.Fatal(err)
		}
		defer v.Close()
		var segs []packets.Segment
		for i := 1; i <= 30; i++ {
			segs = append(segs, packets.Segment{Emotion: "neutral", Language: "en", Text: fmt.Sprintf("sentence %d.", i)})
		}
		start := time.Now()
		clips, err := v.Say(context.Background(), segs, "")
		if err != nil {
			t.Fatalf("after %s: %v", time.Since(start), err)
		}
		if len(clips) != 30 {
			t.Fatalf("%d clips", len(clips))
		}
		// In order, but for the two a voice makes at once (Parallel).
		for i, s := range p.order {
			var n int
			fmt.Sscanf(s, "sentence %d.", &n)
			if d := n - (i + 1); d < -1 || d > 1 {
				t.Fatalf("the server was asked for %q in place %d (order %q)", s, i+1, p.order)
			}
		}
		// The live path: a reply's segments are voiced in order, each.
		v.play("desktop", "t1", false, segsWithPrefix(segs, "live "), closed())
		if len(got) != 30 {
			t.Fatalf("%d speech events, want 30", len(got))
		}
		for i, s := range got {
			if s.Error != "" || s.Text != fmt.Sprintf("live sentence %d.", i+1) {
				t.Errorf("speech %d: %+v", i, s)
			}
		}
	})
}

func segsWithPrefix(segs []packets.Segment, prefix string) []packets.Segment {
	out := make([]packets.Segment, len(segs))
	for i, s := range segs {
		s.Text = prefix + s.Text
		out[i] = s
	}
	return out
}

func closed() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// A clip that is only silence is a failed synthesis: the segment is
// skipped with its reason, the others are voiced, and nothing silent is
// kept (asked again, the server is asked again).
func TestASilentClipIsSkippedAndNotKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &oneAtATime{perClip: time.Second}
		var got []Speech
		v, _ := NewVoice(Options{Provider: p, Emit: func(s Speech) { got = append(got, s) }})
		defer v.Close()
		segs := []packets.Segment{{Text: "hello."}, {Text: "fail"}, {Text: "bye."}}
		v.play("desktop", "t1", false, segs, closed())
		if len(got) != 3 || got[0].Error != "" || got[2].Error != "" || got[1].Error == "" || got[1].Audio != "" {
			t.Fatalf("speech: %+v", got)
		}
		if _, err := v.Synthesize(context.Background(), packets.Segment{Text: "fail"}, ""); err == nil {
			t.Fatal("a silent clip was taken as speech")
		}
		if p.calls["fail"] != 2 {
			t.Fatalf("the silent clip was kept: the server was asked %d times", p.calls["fail"])
		}
		if _, err := v.Synthesize(context.Background(), packets.Segment{Text: "hello."}, ""); err != nil || p.calls["hello."] != 1 {
			t.Fatalf("a good clip was not kept: %v, %d calls", err, p.calls["hello."])
		}
	})
}

// Clips of another rate or channel count join at the first one's.
func TestJoinResamplesOtherFormats(t *testing.T) {
	a := Audio{Data: PCMWAV(make([]byte, 64000), 32000, 1), Type: "audio/wav"}   // 1 s
	b := Audio{Data: PCMWAV(make([]byte, 32000), 16000, 1), Type: "audio/wav"}   // 1 s
	c := Audio{Data: PCMWAV(make([]byte, 4*22050), 22050, 2), Type: "audio/wav"} // 1 s stereo
	j, err := Join([]Audio{a, b, c})
	if err != nil {
		t.Fatal(err)
	}
	w, err := ParseWAV(j.Data)
	if err != nil || w.SampleRate != 32000 || w.Channels != 1 {
		t.Fatalf("%+v %v", w, err)
	}
	if d := w.Duration(); d < 2990*time.Millisecond || d > 3010*time.Millisecond {
		t.Fatalf("joined %s, want 3 s", d)
	}
}

// A stream's WAV says "until the end" and carries each clip's samples at
// the first's format as it comes; a clip that cannot follow is refused and
// the stream goes on.
func TestStreamCarriesClipsAsTheyCome(t *testing.T) {
	var s Stream
	first, err := s.Next(Audio{Data: PCMWAV(make([]byte, 64000), 32000, 1), Type: "audio/wav"}) // 1 s
	if err != nil || s.Type() != "audio/wav" || len(first) != 44+64000 {
		t.Fatalf("%d bytes, %q, %v", len(first), s.Type(), err)
	}
	if riff, data := binary.LittleEndian.Uint32(first[4:]), binary.LittleEndian.Uint32(first[40:]); riff != 0xFFFFFFFF || data != 0xFFFFFFFF {
		t.Fatalf("sizes %#x %#x, want 0xFFFFFFFF", riff, data)
	}
	if _, err := s.Next(Audio{Data: []byte("OggS...."), Type: "audio/ogg"}); err == nil {
		t.Fatal("an ogg clip followed a WAV")
	}
	if _, err := s.Next(Audio{Data: PCMWAV(nil, 8000, 1)[:20], Type: "audio/wav"}); err == nil {
		t.Fatal("a broken WAV followed")
	}
	next, err := s.Next(Audio{Data: PCMWAV(make([]byte, 4*16000), 16000, 2), Type: "audio/wav"}) // 1 s stereo
	if err != nil || len(next) != 64000 {
		t.Fatalf("%d bytes, %v; want 1 s at 32 kHz mono", len(next), err)
	}
	w, err := ParseWAV(append(first, next...))
	if err != nil || w.SampleRate != 32000 || w.Channels != 1 || w.Duration() != 2*time.Second {
		t.Fatalf("%+v %s %v", w, w.Duration(), err)
	}
	var o Stream
	if b, err := o.Next(Audio{Data: []byte("OggS1"), Type: "audio/ogg"}); err != nil || string(b) != "OggS1" || o.Type() != "audio/ogg" {
		t.Fatalf("ogg: %q %v", b, err)
	}
}

// A GPT-SoVITS voice asks for one clip at a time, as api_v2 makes them;
// others keep two at once.
func TestGPTSoVITSIsVoicedOneClipAtATime(t *testing.T) {
	g, err := NewGPTSoVITS(GPTSoVITSOptions{Refs: map[string]Reference{"neutral": {Audio: "/r/a.wav", Text: "a", Lang: "zh"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		p    Provider
		set  int
		want int
	}{
		{"gpt-sovits", g, 0, 1},
		{"gpt-sovits, set", g, 3, 3},
		{"espeak-ng", NewEspeak(EspeakOptions{}), 0, 2},
	} {
		v, err := NewVoice(Options{Provider: tt.p, Parallel: tt.set})
		if err != nil {
			t.Fatal(err)
		}
		if v.turns.free != tt.want {
			t.Errorf("%s: %d at once, want %d", tt.name, v.turns.free, tt.want)
		}
		v.Close()
	}
}

// Each hands the first clip over as soon as it is made, while the rest
// are still being made, in order; when its callback says stop, the
// segments not yet begun are given up.
func TestEachHandsClipsOverAsTheyAreMade(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &oneAtATime{perClip: 2 * time.Second}
		v, err := NewVoice(Options{Provider: p, Parallel: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer v.Close()
		var segs []packets.Segment
		for i := range 5 {
			segs = append(segs, packets.Segment{Text: fmt.Sprintf("s%d.", i+1)})
		}
		start := time.Now()
		var got []string
		var at []time.Duration
		v.Each(context.Background(), segs, "", func(i int, c Clip, err error) bool {
			if err != nil {
				t.Errorf("segment %d: %v", i+1, err)
			}
			got = append(got, c.Text)
			at = append(at, time.Since(start))
			return i < 1 // the client leaves after the second
		})
		if fmt.Sprint(got) != "[s1. s2.]" || at[0] != 2*time.Second || at[1] != 4*time.Second {
			t.Fatalf("handed %q at %v; want s1. at 2s, s2. at 4s", got, at)
		}
		time.Sleep(time.Minute)
		p.mu.lock()
		defer p.mu.unlock()
		if len(p.order) > 3 {
			t.Errorf("the server was asked for %q after the caller stopped at s2.", p.order)
		}
	})
}
