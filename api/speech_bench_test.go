package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/internal/ttstest"
	"github.com/cyan-agent/cyan/journal"
	"github.com/cyan-agent/cyan/tts"
)

// BenchmarkFirstAudioByte times, through the API, the wait from the
// model's first token (the turn's first live text on the journal) to the
// first byte of the first segment's audio, as a page gets it: the speech
// event on /api/v1/stream, then GET of its audio; for a streamed POST
// /api/v1/messages and for one that is not streamed (its caller waits for
// the whole answer, the voice does not). The fake model writes 2
// characters every 20 ms (a local model's pace). The voices: the real
// espeak-ng, and the GPT-SoVITS fake over HTTP taking
// ttstest.SoVITSLatency a clip, one at a time, as api_v2 does.
//
//	go test ./api -run X -bench FirstAudioByte -benchtime 20x
func BenchmarkFirstAudioByte(b *testing.B) {
	for _, voice := range []string{"espeak-ng", "gpt-sovits"} {
		for _, streamed := range []bool{true, false} {
			name := voice + "/streamed"
			if !streamed {
				name = voice + "/not-streamed"
			}
			b.Run(name, func(b *testing.B) { benchFirstAudio(b, benchProvider(b, voice), streamed) })
		}
	}
}

// benchProvider is the real espeak-ng, or the GPT-SoVITS fake with its
// per-sentence latency model.
func benchProvider(b *testing.B, voice string) tts.Provider {
	if voice == "espeak-ng" {
		if _, err := exec.LookPath("espeak-ng"); err != nil {
			b.Skip("espeak-ng is not installed")
		}
		return tts.NewEspeak(tts.EspeakOptions{})
	}
	srv := httptest.NewServer(&ttstest.GPTSoVITS{Latency: ttstest.SoVITSLatency})
	b.Cleanup(srv.Close)
	p, err := tts.NewGPTSoVITS(tts.GPTSoVITSOptions{BaseURL: srv.URL,
		Refs: map[string]tts.Reference{"neutral": {Audio: "/r/calm.wav", Text: "你好呀", Lang: "zh"}}})
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkSpeechFirstByte times POST /api/v1/speech of a 30-sentence
// text to its answer's first byte, streamed and whole, with espeak-ng and
// with the GPT-SoVITS fake (ttstest.SoVITSLatency a sentence: about 70 s
// for the whole, so run it a few times only):
//
//	go test ./api -run X -bench 'SpeechFirstByte/espeak' -benchtime 20x
//	go test ./api -run X -bench 'SpeechFirstByte/gpt' -benchtime 2x
func BenchmarkSpeechFirstByte(b *testing.B) {
	for _, voice := range []string{"espeak-ng", "gpt-sovits"} {
		for _, stream := range []bool{true, false} {
			name := voice + "/streamed"
			if !stream {
				name = voice + "/whole"
			}
			b.Run(name, func(b *testing.B) {
				v, err := tts.NewVoice(tts.Options{Provider: benchProvider(b, voice), Cache: tts.NewCache(0)})
				if err != nil {
					b.Fatal(err)
				}
				defer v.Close()
				r := newRig(b, func(o *Options) { o.Voice = v })
				var first, whole time.Duration
				for i := 0; b.Loop(); i++ {
					var text strings.Builder
					for n := range 30 { // new sentences each time, so the cache never answers
						fmt.Fprintf(&text, "第%d轮第%d句，今天天气很好，我们出去走走吧。", i, n+1)
					}
					body, _ := json.Marshal(map[string]any{"text": text.String(), "stream": stream})
					began := time.Now()
					resp, err := http.Post(r.srv.URL+"/api/v1/speech", "application/json", bytes.NewReader(body))
					if err != nil {
						b.Fatal(err)
					}
					one := make([]byte, 1)
					if _, err := io.ReadFull(resp.Body, one); err != nil || resp.StatusCode != 200 {
						b.Fatalf("%s %v", resp.Status, err)
					}
					first += time.Since(began)
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					whole += time.Since(began)
				}
				b.ReportMetric(float64(first.Milliseconds())/float64(b.N), "ms/first-byte")
				b.ReportMetric(float64(whole.Milliseconds())/float64(b.N), "ms/whole")
			})
		}
	}
}

func benchFirstAudio(b *testing.B, p tts.Provider, streamed bool) {
	hub := new(speechToJournal)
	v, err := tts.NewVoice(tts.Options{Provider: p, Channels: []string{"desktop"}, Emit: hub.emit,
		Cache: tts.NewCache(0)})
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	r := newRig(b, func(o *Options) { o.Voice = v })
	hub.j.Store(r.st.Journal())
	followVoice(b, v, r)
	stream, err := http.Get(r.srv.URL + "/api/v1/stream?channel=desktop")
	if err != nil {
		b.Fatal(err)
	}
	defer stream.Body.Close()
	speech := make(chan tts.Speech, 64)
	go func() {
		sc := bufio.NewScanner(stream.Body)
		name := ""
		for sc.Scan() {
			if n, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				name = n
			} else if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && name == "speech" {
				var sp tts.Speech
				_ = json.Unmarshal([]byte(d), &sp)
				speech <- sp
			}
		}
	}()
	j := r.st.Journal()
	// quiet is how long no speech means the reply is all voiced: longer
	// than a segment takes.
	quiet := 300 * time.Millisecond
	if p.Name() != "espeak-ng" {
		quiet = 4 * time.Second
	}
	var total time.Duration
	for i := 0; b.Loop(); i++ {
		// A new text each time, so the cache never answers.
		reply := strings.Repeat("嗯", i%7+1) + "，今天天气很好，我们出去走走吧。Shall we go at " + time.Now().Format("15:04:05.000") + "?"
		r.fake.Enqueue(llmtest.Reply{Text: reply, ChunkSize: 2, ChunkDelay: 20 * time.Millisecond})
		sub := j.Subscribe(j.Last(), journal.Filter{Kinds: []journal.Kind{journal.ReplyDelta}})
		done := make(chan struct{})
		go func() {
			defer close(done)
			body := `{"channel": "desktop", "text": "走吗", "stream": ` + strconv.FormatBool(streamed) + `}`
			resp, err := http.Post(r.srv.URL+"/api/v1/messages", "application/json", strings.NewReader(body))
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
		evs, err := sub.Next(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		first := time.Now()
		var d journal.Delta
		if err := evs[0].Decode(&d); err != nil {
			b.Fatal(err)
		}
		sp := <-speech
		for sp.Turn != d.MessageID { // the last reply's, late
			sp = <-speech
		}
		a, err := http.Get(r.srv.URL + sp.Audio)
		if err != nil {
			b.Fatal(err)
		}
		one := make([]byte, 1)
		if _, err := a.Body.Read(one); err != nil {
			b.Fatal(err)
		}
		total += time.Since(first)
		a.Body.Close()
		<-done
		for len(speech) > 0 || waitMore(speech, quiet) {
			<-speech
		}
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/first-audio")
}

// waitMore reports whether more speech of the last reply comes within
// quiet.
func waitMore(ch chan tts.Speech, quiet time.Duration) bool {
	select {
	case sp := <-ch:
		ch <- sp
		return true
	case <-time.After(quiet):
		return false
	}
}
