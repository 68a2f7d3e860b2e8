package api

import (
	"encoding/binary"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/ttstest"
	"github.com/cyan-agent/cyan/tts"
)

// sovitsRig is an API whose voice is a fake GPT-SoVITS api_v2 server.
func sovitsRig(t testing.TB, fake *ttstest.GPTSoVITS, o tts.Options) *rig {
	t.Helper()
	ss := httptest.NewServer(fake)
	t.Cleanup(ss.Close)
	p, err := tts.NewGPTSoVITS(tts.GPTSoVITSOptions{BaseURL: ss.URL,
		Refs: map[string]tts.Reference{"neutral": {Audio: "/r/calm.wav", Text: "你好呀", Lang: "zh"}}})
	if err != nil {
		t.Fatal(err)
	}
	o.Provider = p
	o.Channels = []string{"desktop"}
	v, err := tts.NewVoice(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	return newRig(t, func(o *Options) { o.Voice = v })
}

// A streamed speech answer carries the first segment's audio while the
// next is still being made; a segment that fails after that is skipped and
// named in the trailer, the others play on; one that fails before any
// audio is the JSON error the whole answer gets.
func TestSpeechStreamsSegmentBySegment(t *testing.T) {
	held := make(chan struct{})
	fake := &ttstest.GPTSoVITS{Rate: 32000, Broken: map[string]bool{"坏了。": true},
		Wait: func(text string, _ time.Duration) {
			if text == "第二句。" {
				<-held
			}
		}}
	r := sovitsRig(t, fake, tts.Options{})
	resp, err := http.Post(r.srv.URL+"/api/v1/speech", "application/json",
		strings.NewReader(`{"text": "第一句。第二句。坏了。第三句。", "stream": true}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "audio/wav" || resp.ContentLength != -1 {
		t.Fatalf("%s %v, length %d", resp.Status, resp.Header, resp.ContentLength)
	}
	first := ttstest.Tone("第一句。", 32000)
	head := make([]byte, 44+len(first))
	if _, err := io.ReadFull(resp.Body, head); err != nil { // "第二句。" is still held
		t.Fatal(err)
	}
	if string(head[44:]) != string(first) || binary.LittleEndian.Uint32(head[40:]) != 0xFFFFFFFF {
		t.Fatalf("the first segment is not the stream's start: data size %#x", binary.LittleEndian.Uint32(head[40:]))
	}
	close(held)
	rest, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	want := string(ttstest.Tone("第二句。", 32000)) + string(ttstest.Tone("第三句。", 32000))
	if string(rest) != want {
		t.Fatalf("after the first segment %d bytes, want %d (the second and the third, the silent one left out)", len(rest), len(want))
	}
	w, err := tts.ParseWAV(append(head, rest...))
	if err != nil || w.SampleRate != 32000 || w.DataSize != len(first)+len(want) {
		t.Fatalf("the whole stream as a WAV: %+v %v", w, err)
	}
	if got := resp.Trailer.Get("X-Cyan-Segments"); got != "3" {
		t.Errorf("X-Cyan-Segments %q, want 3", got)
	}
	if got := resp.Trailer.Get("X-Cyan-Skipped"); !strings.HasPrefix(got, "3 (") || !strings.Contains(got, "silence") {
		t.Errorf("X-Cyan-Skipped %q, want segment 3 named with why", got)
	}

	// A failure before any audio: the JSON error, as without stream.
	code, out := r.do(t, "POST", "/api/v1/speech", `{"text": "坏了。第二句。", "stream": true}`)
	if e, _ := out["error"].(map[string]any); code != http.StatusBadGateway || e == nil || !strings.Contains(e["message"].(string), "segment 1") {
		t.Errorf("a first segment that fails: %d", code)
	}
}
