package api

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/journal"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/internal/ttstest"
	"github.com/cyan-agent/cyan/tts"
)

// voiceRig is an API whose desktop channel is voiced by a fake
// OpenAI-compatible speech server.
func voiceRig(t *testing.T) (*rig, *ttstest.OpenAISpeech) {
	t.Helper()
	speech := &ttstest.OpenAISpeech{}
	ss := httptest.NewServer(speech)
	t.Cleanup(ss.Close)
	p, err := tts.NewOpenAI(tts.OpenAIOptions{BaseURL: ss.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	hub := new(speechToJournal)
	v, err := tts.NewVoice(tts.Options{Provider: p, Channels: []string{"desktop"}, Emit: hub.emit})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	r := newRig(t, func(o *Options) { o.Voice = v })
	hub.j.Store(r.st.Journal())
	followVoice(t, v, r)
	return r, speech
}

// followVoice runs the voice on the rig's journal, as the daemon does.
func followVoice(t testing.TB, v *tts.Voice, r *rig) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = v.Follow(ctx, r.st.Journal(), "speak")
	}()
	t.Cleanup(func() { cancel(); <-done })
}

func TestSpeechAnswersWithAudio(t *testing.T) {
	r, speech := voiceRig(t)
	post := func(body string) *http.Response {
		resp, err := http.Post(r.srv.URL+"/api/v1/speech", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	resp := post(`{"text": "你好，今天天气很好。こんにちは、元気ですか？I am fine, thank you very much."}`)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "audio/wav" || resp.Header.Get("X-Cyan-Segments") != "3" {
		t.Fatalf("%s %v %q", resp.Status, resp.Header, b[:min(len(b), 200)])
	}
	w, err := tts.ParseWAV(b)
	if err != nil || w.SampleRate != 24000 {
		t.Fatalf("%+v %v", w, err)
	}
	if n := len(speech.Requests()); n != 3 {
		t.Errorf("%d speech requests, want one per segment", n)
	}
	resp = post(`{"segments": [{"text": "嘿嘿", "emotion": "happy"}], "voice": "nova"}`)
	if resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	if last := speech.Requests()[len(speech.Requests())-1]; last.Voice != "nova" || last.Input != "嘿嘿" {
		t.Errorf("the voice override: %+v", last)
	}
	for body, want := range map[string]int{
		`{}`: 400,
		`{"text": "a", "segments": [{"text": "b"}]}`:    400,
		`{"segments": [{"text": " "}]}`:                 400,
		`{"text": "……"}`:                                400,
		`{"text": "hi", "voice": "-rf"}`:                400,
		`{"text": "` + strings.Repeat("好", 4001) + `"}`: 400,
		`not json`: 400,
	} {
		if resp := post(body); resp.StatusCode != want {
			t.Errorf("%.40s: %s, want %d", body, resp.Status, want)
		}
	}
	if code, out := r.do(t, "GET", "/api/v1/speech/0123", ""); code != 404 || !strings.Contains(out["error"].(map[string]any)["message"].(string), "POST /api/v1/speech") {
		t.Errorf("a missing audio: %d %v", code, out)
	}
}

// A streamed reply in a voiced channel puts speech events on the stream,
// in order, each with audio that the daemon serves.
func TestStreamCarriesSpeech(t *testing.T) {
	r, _ := voiceRig(t)
	resp, err := http.Get(r.srv.URL + "/api/v1/stream?channel=desktop")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := make(chan [2]string, 16)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		name := ""
		for sc.Scan() {
			line := sc.Text()
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				name = v
			} else if v, ok := strings.CutPrefix(line, "data: "); ok {
				events <- [2]string{name, v}
			}
		}
		close(events)
	}()
	if e := <-events; e[0] != "ready" {
		t.Fatalf("first event %v", e)
	}
	r.fake.Enqueue(llmtest.Reply{Text: "好的！Let me check that for you.", ChunkSize: 2})
	post, err := http.Post(r.srv.URL+"/api/v1/messages", "application/json", strings.NewReader(`{"channel": "desktop", "text": "帮我看看", "stream": true}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(post.Body)
	post.Body.Close()
	_, after, _ := strings.Cut(string(body), `"message_id":"`)
	turn, _, _ := strings.Cut(after, `"`)
	var speech []tts.Speech
	timeout := time.After(10 * time.Second)
	for len(speech) < 2 {
		select {
		case e, ok := <-events:
			if !ok {
				t.Fatal("the stream ended")
			}
			if e[0] == "speech" {
				var sp tts.Speech
				json.Unmarshal([]byte(e[1]), &sp)
				speech = append(speech, sp)
			}
		case <-timeout:
			t.Fatalf("speech %+v", speech)
		}
	}
	if speech[0].Text != "好的！" || speech[0].Language != "zh" || speech[1].Language != "en" || speech[0].Seq != 0 || speech[1].Seq != 1 {
		t.Errorf("speech %+v", speech)
	}
	if turn == "" || speech[0].Turn != turn || speech[0].Error != "" {
		t.Errorf("the speech's turn %q, the message %q", speech[0].Turn, turn)
	}
	a, err := http.Get(r.srv.URL + speech[1].Audio)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(a.Body)
	a.Body.Close()
	if a.StatusCode != 200 || a.Header.Get("Content-Type") != "audio/wav" {
		t.Fatalf("%s %v", a.Status, a.Header)
	}
	if _, err := tts.ParseWAV(b); err != nil {
		t.Fatal(err)
	}
}

// speechToJournal is a voice's Emit posting on the rig's journal once it is
// set, as the daemon wires it.
type speechToJournal struct {
	j atomic.Pointer[journal.Journal]
}

func (s *speechToJournal) emit(sp tts.Speech) {
	s.j.Load().Post(journal.New(journal.VoiceSpeech, sp.Channel, sp))
}

// A reply its caller does not stream is voiced as the model writes it: its
// first sentence is spoken while the POST still waits for the rest.
func TestAnUnstreamedReplyIsVoicedAsItIsWritten(t *testing.T) {
	r, _ := voiceRig(t)
	resp, err := http.Get(r.srv.URL + "/api/v1/stream?channel=desktop")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	speech := make(chan tts.Speech, 16)
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(resp.Body)
		name := ""
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				name = v
				if name == "ready" {
					close(ready)
				}
			} else if v, ok := strings.CutPrefix(sc.Text(), "data: "); ok && name == "speech" {
				var sp tts.Speech
				json.Unmarshal([]byte(v), &sp)
				speech <- sp
			}
		}
	}()
	<-ready
	// 5 runes a chunk, 100 ms apart: the whole takes 2 s, the first
	// sentence is written after the first chunk.
	r.fake.Enqueue(llmtest.Reply{Text: "第一句话。" + strings.Repeat("然后慢慢地说下去", 12) + "。", ChunkSize: 5, ChunkDelay: 100 * time.Millisecond})
	done := make(chan struct{})
	go func() {
		defer close(done)
		post, err := http.Post(r.srv.URL+"/api/v1/messages", "application/json", strings.NewReader(`{"channel": "desktop", "text": "说吧"}`))
		if err == nil {
			io.Copy(io.Discard, post.Body)
			post.Body.Close()
		}
	}()
	select {
	case sp := <-speech:
		if sp.Text != "第一句话。" {
			t.Errorf("first speech %+v", sp)
		}
		select {
		case <-done:
			t.Error("the first sentence was voiced only after the whole reply")
		default:
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no speech")
	}
	<-done
}

// TestSpeechActionsIsThePagesSetting: PUT /api/v1/speech/actions changes
// what *actions* become, /api/v1/persona says the mode in force, and a
// mode that is not skip, speak or narrate is refused, saying which are.
func TestSpeechActionsIsThePagesSetting(t *testing.T) {
	r, _ := voiceRig(t)
	if code, out := r.do(t, "GET", "/api/v1/persona?channel=desktop", ""); code != 200 || out["actions"] != "skip" {
		t.Fatalf("persona: %d %v, want actions skip", code, out)
	}
	if code, out := r.do(t, "PUT", "/api/v1/speech/actions", `{"actions": "narrate"}`); code != 200 || out["actions"] != "narrate" {
		t.Fatalf("PUT narrate: %d %v", code, out)
	}
	if _, out := r.do(t, "GET", "/api/v1/persona?channel=desktop", ""); out["actions"] != "narrate" {
		t.Fatalf("persona after PUT: %v", out)
	}
	code, out := r.do(t, "PUT", "/api/v1/speech/actions", `{"actions": "shout"}`)
	if msg, _ := out["error"].(map[string]any)["message"].(string); code != 400 || !strings.Contains(msg, `"narrate"`) {
		t.Fatalf("PUT shout: %d %v", code, out)
	}
	if _, out := r.do(t, "GET", "/api/v1/persona?channel=desktop", ""); out["actions"] != "narrate" {
		t.Fatalf("a refused mode changed it: %v", out)
	}
}
