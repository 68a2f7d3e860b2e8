package api

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/journal"
	"github.com/cyan-agent/cyan/tts"
)

// BenchmarkFirstAudioByte times, through the API with the real espeak-ng,
// the wait from the model's first token (the turn's first live text on the
// journal) to the first byte of the first segment's audio, as a page gets
// it: the speech event on /api/v1/stream, then GET of its audio; for a
// streamed POST /api/v1/messages and for one that is not streamed (its
// caller waits for the whole answer, the voice does not). The fake model
// writes 2 characters every 20 ms (a local model's pace).
//
//	go test ./api -run X -bench FirstAudioByte -benchtime 20x
func BenchmarkFirstAudioByte(b *testing.B) {
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		b.Skip("espeak-ng is not installed")
	}
	for _, streamed := range []bool{true, false} {
		name := "streamed"
		if !streamed {
			name = "not-streamed"
		}
		b.Run(name, func(b *testing.B) { benchFirstAudio(b, streamed) })
	}
}

func benchFirstAudio(b *testing.B, streamed bool) {
	hub := new(speechToJournal)
	v, err := tts.NewVoice(tts.Options{Provider: tts.NewEspeak(tts.EspeakOptions{}), Channels: []string{"desktop"}, Emit: hub.emit,
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
		if _, err := sub.Next(context.Background()); err != nil {
			b.Fatal(err)
		}
		first := time.Now()
		sp := <-speech
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
		for len(speech) > 0 || waitMore(speech) {
			<-speech
		}
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/first-audio")
}

// waitMore reports whether more speech of the last reply is on its way.
func waitMore(ch chan tts.Speech) bool {
	select {
	case sp := <-ch:
		ch <- sp
		return true
	case <-time.After(300 * time.Millisecond):
		return false
	}
}
