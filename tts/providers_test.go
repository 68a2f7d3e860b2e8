package tts_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/internal/ttstest"
	"github.com/cyan-agent/cyan/tts"
)

// requireTool skips when a program is missing, unless CYAN_REQUIRE_TOOLS=1
// (CI), where it fails.
func requireTool(t testing.TB, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CYAN_REQUIRE_TOOLS") == "1" {
			t.Fatalf("%s is required (CYAN_REQUIRE_TOOLS=1) but not installed: apt-get install %s", name, name)
		}
		t.Skipf("%s is not installed (apt-get install %s)", name, name)
	}
}

// mixed is a reply in Chinese, Japanese and English.
const mixed = "你好，今天天气很好。こんにちは、元気ですか？I am fine, thank you very much."

var mixedLangs = []string{"zh", "ja", "en"}

// sayMixed cuts the mixed reply and voices it, checking the segments'
// languages and that each has a valid WAV of its own.
func sayMixed(t *testing.T, p tts.Provider) []tts.Clip {
	t.Helper()
	v, err := tts.NewVoice(tts.Options{Provider: p})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	segs := tts.Split(mixed)
	if len(segs) != len(mixedLangs) {
		t.Fatalf("segments %q, want %d", segs, len(mixedLangs))
	}
	clips, err := v.Say(context.Background(), segs, "")
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range clips {
		if c.Language != mixedLangs[i] || c.Text != segs[i].Text {
			t.Errorf("clip %d is %s %q, want %s %q", i, c.Language, c.Text, mixedLangs[i], segs[i].Text)
		}
		if c.Type != "audio/wav" {
			t.Errorf("clip %d: type %q", i, c.Type)
		}
		w, err := tts.ParseWAV(c.Data)
		if err != nil {
			t.Fatalf("clip %d: %v", i, err)
		}
		if w.Duration() < 200e6 || w.Channels != 1 || w.BitsPerSample != 16 {
			t.Errorf("clip %d: %+v (%s)", i, w, w.Duration())
		}
	}
	return clips
}

func TestEspeakSpeaksChineseJapaneseEnglish(t *testing.T) {
	requireTool(t, "espeak-ng")
	sayMixed(t, tts.NewEspeak(tts.EspeakOptions{}))
	// The voice of each language is the one asked for.
	e := tts.NewEspeak(tts.EspeakOptions{Voices: map[string]string{"zh": "yue"}})
	for lang, want := range map[string]string{"zh": "yue", "ja": "ja", "en": "en-us", "xx": "en-us"} {
		if got := e.VoiceOf(tts.Request{Language: lang}); !strings.HasPrefix(got, want+" ") {
			t.Errorf("voice of %s: %q, want %s", lang, got, want)
		}
	}
	// The seed's own codes (cn, jp) and other aliases reach the right
	// voice, not the English one.
	d := tts.NewEspeak(tts.EspeakOptions{})
	for lang, want := range map[string]string{"cn": "cmn", "CN": "cmn", "zh-CN": "cmn", "Chinese": "cmn", "jp": "ja", "ja_JP": "ja", "japanese": "ja", "kr": "ko", "zh-HK": "yue", "en-GB": "en-us"} {
		if got := d.VoiceOf(tts.Request{Language: lang}); !strings.HasPrefix(got, want+" ") {
			t.Errorf("voice of %s: %q, want %s", lang, got, want)
		}
	}
	// And the audio is the Chinese voice's: not the English voice reading
	// the same text.
	cn, err := d.Synthesize(context.Background(), tts.Request{Text: "你好，今天天气很好。", Language: "cn"})
	if err != nil {
		t.Fatal(err)
	}
	zh, _ := d.Synthesize(context.Background(), tts.Request{Text: "你好，今天天气很好。", Language: "zh"})
	en, _ := d.Synthesize(context.Background(), tts.Request{Text: "你好，今天天气很好。", Language: "en"})
	if !bytes.Equal(cn.Data, zh.Data) || bytes.Equal(cn.Data, en.Data) {
		t.Errorf("cn is not voiced as zh (same as zh: %v, same as en: %v)", bytes.Equal(cn.Data, zh.Data), bytes.Equal(cn.Data, en.Data))
	}
}

func TestEspeakErrors(t *testing.T) {
	missing := tts.NewEspeak(tts.EspeakOptions{Binary: "espeak-ng-not-here"})
	_, err := missing.Synthesize(context.Background(), tts.Request{Text: "hi"})
	if !tts.Unavailable(err) || !strings.Contains(err.Error(), "apt-get install espeak-ng") {
		t.Errorf("a missing program should say which package to install: %v", err)
	}
	requireTool(t, "espeak-ng")
	e := tts.NewEspeak(tts.EspeakOptions{})
	for name, r := range map[string]tts.Request{
		"empty":                {Text: "  "},
		"option-looking voice": {Text: "hi", Voice: "--stdout"},
		"unknown voice":        {Text: "hi", Voice: "zz"},
		"too long":             {Text: strings.Repeat("a", tts.MaxEspeakRunes+1)},
	} {
		if _, err := e.Synthesize(context.Background(), r); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// Text that looks like an option is read, not obeyed.
	a, err := e.Synthesize(context.Background(), tts.Request{Text: "--help -w /tmp/x", Language: "en"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tts.ParseWAV(a.Data); err != nil {
		t.Fatal(err)
	}
}

func TestGPTSoVITSAgainstTheFake(t *testing.T) {
	fake := &ttstest.GPTSoVITS{}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	refs := map[string]tts.Reference{
		"neutral": {Audio: "/refs/calm.wav", Text: "今天也要加油哦。", Lang: "zh"},
		"ask":     {Audio: "/refs/ask.wav", Text: "你在做什么呀？", Lang: "zh"},
	}
	p, err := tts.NewGPTSoVITS(tts.GPTSoVITSOptions{BaseURL: srv.URL, Refs: refs})
	if err != nil {
		t.Fatal(err)
	}
	sayMixed(t, p)
	reqs := fake.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	byLang := map[string]ttstest.SoVITSRequest{}
	for _, r := range reqs {
		if r.Method != "POST" || r.TextLang == nil || r.RefAudioPath == nil || r.PromptLang == nil || r.MediaType == nil {
			t.Fatalf("request %+v lacks a field api_v2 needs", r)
		}
		byLang[*r.TextLang] = r
	}
	if r := byLang["ja"]; *r.RefAudioPath != "/refs/ask.wav" || r.PromptText != "你在做什么呀？" || *r.PromptLang != "zh" || *r.Text != "こんにちは、元気ですか？" {
		t.Errorf("the question should use the ask reference: %+v", r)
	}
	if r := byLang["en"]; *r.RefAudioPath != "/refs/calm.wav" || *r.MediaType != "wav" {
		t.Errorf("neutral english: %+v", r)
	}

	// The server's refusal comes back with its message.
	fake.Fail = "CUDA out of memory"
	_, err = p.Synthesize(context.Background(), tts.Request{Text: "你好", Language: "zh"})
	if err == nil || !strings.Contains(err.Error(), "CUDA out of memory") || !strings.Contains(err.Error(), "tts failed") {
		t.Errorf("refusal: %v", err)
	}
	// A server that is down names its URL.
	srv.Close()
	_, err = p.Synthesize(context.Background(), tts.Request{Text: "你好", Language: "zh"})
	if !tts.Unavailable(err) || !strings.Contains(err.Error(), srv.URL) {
		t.Errorf("down: %v", err)
	}
}

func TestGPTSoVITSFakeRejectsWhatTheRealOneRejects(t *testing.T) {
	srv := httptest.NewServer(&ttstest.GPTSoVITS{})
	defer srv.Close()
	for name, ref := range map[string]tts.Reference{
		"no reference audio":  {Audio: "", Lang: "zh"},
		"an unknown language": {Audio: "/a.wav", Lang: "fr"},
	} {
		p, _ := tts.NewGPTSoVITS(tts.GPTSoVITSOptions{BaseURL: srv.URL, Refs: map[string]tts.Reference{"neutral": ref}})
		_, err := p.Synthesize(context.Background(), tts.Request{Text: "你好", Language: "zh"})
		if err == nil || !strings.Contains(err.Error(), "400") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestOpenAISpeechAgainstTheFake(t *testing.T) {
	fake := &ttstest.OpenAISpeech{Key: "sk-test", Voices: []string{"alloy", "nova"}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	p, err := tts.NewOpenAI(tts.OpenAIOptions{BaseURL: srv.URL + "/v1", APIKey: "sk-test", Voices: map[string]string{"ja": "nova"}})
	if err != nil {
		t.Fatal(err)
	}
	sayMixed(t, p)
	for _, r := range fake.Requests() {
		want := "alloy"
		if strings.Contains(r.Input, "こんにちは") {
			want = "nova"
		}
		if r.Model != "tts-1" || r.Voice != want || r.ResponseFormat != "wav" || r.Authorization != "Bearer sk-test" {
			t.Errorf("request %+v", r)
		}
	}
	// Errors carry the API's message.
	bad, _ := tts.NewOpenAI(tts.OpenAIOptions{BaseURL: srv.URL + "/v1", APIKey: "sk-test", Voice: "zzz"})
	if _, err := bad.Synthesize(context.Background(), tts.Request{Text: "hi"}); err == nil || !strings.Contains(err.Error(), "Invalid value: 'zzz'") {
		t.Errorf("bad voice: %v", err)
	}
	nokey, _ := tts.NewOpenAI(tts.OpenAIOptions{BaseURL: srv.URL + "/v1"})
	if _, err := nokey.Synthesize(context.Background(), tts.Request{Text: "hi"}); err == nil || !strings.Contains(err.Error(), "tts.api_key") {
		t.Errorf("no key: %v", err)
	}
	if _, err := p.Synthesize(context.Background(), tts.Request{Text: strings.Repeat("a", 4097)}); err == nil {
		t.Error("an input over 4096 characters should be refused before sending")
	}
}

// BenchmarkEspeak times one espeak-ng synthesis of a short sentence.
func BenchmarkEspeak(b *testing.B) {
	requireTool(b, "espeak-ng")
	e := tts.NewEspeak(tts.EspeakOptions{})
	for b.Loop() {
		if _, err := e.Synthesize(context.Background(), tts.Request{Text: "嗯，今天天气很好，", Language: "zh"}); err != nil {
			b.Fatal(err)
		}
	}
}

// Every language code api_v2 defines passes through as it is, as the text
// language and as a reference's; tags fold to a code it knows. The list is
// v2_languages of GPT_SoVITS/TTS_infer_pack/TTS.py in
// github.com/RVC-Boss/GPT-SoVITS at commit
// 48b1a0169a28582a8984402f82cf438d3bfa6aca.
func TestGPTSoVITSLanguageCodesPassThrough(t *testing.T) {
	apiV2 := []string{"auto", "auto_yue", "en", "zh", "ja", "yue", "ko", "all_zh", "all_ja", "all_yue", "all_ko"}
	if got := tts.GPTSoVITSLanguages(); !slices.Equal(got, apiV2) {
		t.Fatalf("config's list %v is not api_v2's %v", got, apiV2)
	}
	fake := &ttstest.GPTSoVITS{}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	tests := []struct{ lang, want string }{
		{"zh-CN", "zh"}, {"ja_JP", "ja"}, {"zh-HK", "yue"}, {"ALL_ZH", "all_zh"}, {"cn", "zh"}, {"jp", "ja"}, {"fr", "auto"}, {"", "auto"},
	}
	for _, code := range apiV2 {
		tests = append(tests, struct{ lang, want string }{code, code})
	}
	for _, tt := range tests {
		t.Run(tt.lang, func(t *testing.T) {
			ref := tt.lang
			if tt.want == "auto" && tt.lang != "auto" {
				ref = "zh"
			}
			p, err := tts.NewGPTSoVITS(tts.GPTSoVITSOptions{BaseURL: srv.URL, Refs: map[string]tts.Reference{"neutral": {Audio: "/r.wav", Text: "你好", Lang: ref}}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Synthesize(context.Background(), tts.Request{Text: "你好 " + tt.lang, Language: tt.lang}); err != nil {
				t.Fatalf("the fake api_v2 refused %q: %v", tt.lang, err)
			}
			reqs := fake.Requests()
			last := reqs[len(reqs)-1]
			if *last.TextLang != tt.want {
				t.Errorf("text_lang %q, want %q", *last.TextLang, tt.want)
			}
			if ref == tt.lang && *last.PromptLang != tt.want {
				t.Errorf("prompt_lang %q, want %q", *last.PromptLang, tt.want)
			}
			// config check agrees: what is sent as itself is accepted.
			_, ok := tts.GPTSoVITSLanguage(tt.lang)
			if ok != (tt.want != "auto" || tt.lang == "auto") {
				t.Errorf("tts.GPTSoVITSLanguage(%q) ok = %v", tt.lang, ok)
			}
		})
	}
}

// gpt-4o-mini-tts is told each segment's emotion as instructions; tts-1 is
// not (it takes none), and neutral says nothing.
func TestOpenAIInstructionsCarryTheEmotion(t *testing.T) {
	fake := &ttstest.OpenAISpeech{}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	tests := []struct{ model, emotion, want string }{
		{"gpt-4o-mini-tts", "happy", "Speak in a happy, cheerful tone."},
		{"gpt-4o-mini-tts", "sad", "Speak in a sad, quiet tone."},
		{"gpt-4o-mini-tts", tts.Narration, "Narrate calmly, like a storyteller describing what someone does."},
		{"gpt-4o-mini-tts", "neutral", ""},
		{"tts-1", "happy", ""},
	}
	for _, tt := range tests {
		p, _ := tts.NewOpenAI(tts.OpenAIOptions{BaseURL: srv.URL + "/v1", Model: tt.model})
		if _, err := p.Synthesize(context.Background(), tts.Request{Text: "hi", Emotion: tt.emotion}); err != nil {
			t.Fatal(err)
		}
		reqs := fake.Requests()
		if got := reqs[len(reqs)-1].Instructions; got != tt.want {
			t.Errorf("%s %s: instructions %q, want %q", tt.model, tt.emotion, got, tt.want)
		}
	}
	p, _ := tts.NewOpenAI(tts.OpenAIOptions{BaseURL: srv.URL + "/v1", Model: "gpt-4o-mini-tts"})
	if p.VoiceOf(tts.Request{Emotion: "happy"}) == p.VoiceOf(tts.Request{Emotion: "sad"}) {
		t.Error("two emotions share a cache key though they sound different")
	}
}

// A missing emotion reference (refs/happy.wav not on the server) falls
// back to the neutral reference: the sentence is voiced, in the neutral
// tone; TryReference, which doctor uses, names the missing one.
func TestGPTSoVITSMissingReferenceFallsBack(t *testing.T) {
	fake := &ttstest.GPTSoVITS{Missing: map[string]bool{"/refs/happy.wav": true}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	p, err := tts.NewGPTSoVITS(tts.GPTSoVITSOptions{BaseURL: srv.URL, Refs: map[string]tts.Reference{
		"neutral": {Audio: "/refs/neutral.wav", Text: "你好", Lang: "zh"},
		"happy":   {Audio: "/refs/happy.wav", Text: "太好了", Lang: "zh"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	a, err := p.Synthesize(context.Background(), tts.Request{Text: "好开心", Language: "zh", Emotion: "happy"})
	if err != nil || len(a.Data) == 0 {
		t.Fatalf("a missing reference failed the sentence: %v", err)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 || *reqs[0].RefAudioPath != "/refs/happy.wav" || *reqs[1].RefAudioPath != "/refs/neutral.wav" {
		t.Fatalf("requests: %d", len(reqs))
	}
	if err := p.TryReference(context.Background(), "happy", "你好"); err == nil || !strings.Contains(err.Error(), "/refs/happy.wav") {
		t.Fatalf("TryReference(happy) = %v, want the missing file named", err)
	}
	if err := p.TryReference(context.Background(), "neutral", "你好"); err != nil {
		t.Fatalf("TryReference(neutral) = %v", err)
	}
	if got := p.References(); fmt.Sprint(got) != "[happy neutral]" {
		t.Fatalf("references %v", got)
	}
}
