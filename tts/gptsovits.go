package tts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/registry"
)

// Reference is a GPT-SoVITS reference: an audio file on the server's
// machine, its transcript and its language. The voice imitates it, so one
// reference per emotion gives the emotion.
type Reference struct {
	Audio, Text, Lang string
}

// GPTSoVITSOptions configure NewGPTSoVITS.
type GPTSoVITSOptions struct {
	// BaseURL is the api_v2.py server (default http://127.0.0.1:9880).
	BaseURL string
	// Refs maps an emotion to its reference; "neutral" (or "default")
	// serves the emotions without one.
	Refs map[string]Reference
	// MediaType is wav (default), ogg or aac.
	MediaType string
	// SpeedFactor is the speed (default 1).
	SpeedFactor float64
	// Client is the HTTP client (default: one without a timeout; calls are
	// bounded by their context).
	Client *http.Client
}

// GPTSoVITS speaks through GPT-SoVITS's api_v2.py: POST /tts with the text,
// its language and the emotion's reference; the answer is the audio (or,
// with status 400, {"message", "Exception"}).
type GPTSoVITS struct {
	o   GPTSoVITSOptions
	url string
}

// promptLang is a reference's language as api_v2 takes it; one it does
// not know is sent as written, so the server's answer names it (config
// check refuses it before).
func promptLang(l string) string {
	if code, ok := GPTSoVITSLanguage(l); ok {
		return code
	}
	return l
}

// sovitsLang is the api_v2 language code for a segment's or a reference's
// language (GPTSoVITSLanguage: api_v2's own codes pass as they are),
// auto for one api_v2 does not know.
func sovitsLang(l string) string {
	if code, ok := GPTSoVITSLanguage(l); ok {
		return code
	}
	return "auto"
}

// NewGPTSoVITS checks the options and makes the provider.
func NewGPTSoVITS(o GPTSoVITSOptions) (*GPTSoVITS, error) {
	if o.BaseURL == "" {
		o.BaseURL = DefaultGPTSoVITSURL
	}
	if o.MediaType == "" {
		o.MediaType = "wav"
	}
	if o.SpeedFactor == 0 {
		o.SpeedFactor = 1
	}
	if o.Client == nil {
		o.Client = &http.Client{}
	}
	if len(o.Refs) == 0 {
		return nil, errors.New("tts: gpt-sovits needs a reference audio (tts.refs: {neutral: {audio, text, lang}})")
	}
	return &GPTSoVITS{o: o, url: strings.TrimRight(o.BaseURL, "/") + "/tts"}, nil
}

// Name implements Provider.
func (g *GPTSoVITS) Name() string { return "gpt-sovits" }

// Parallel is 1: api_v2 makes one clip at a time (its async tts_handle
// runs the whole inference without yielding, under one uvicorn worker:
// api_v2.py at commit 48b1a0169a28582a8984402f82cf438d3bfa6aca, lines
// 418-443 and 572), so a second request in flight only races the first to
// the server, and when it wins, the first sentence waits for the second.
func (g *GPTSoVITS) Parallel() int { return 1 }

// DefaultGPTSoVITSURL is where api_v2.py listens by default.
const DefaultGPTSoVITSURL = "http://127.0.0.1:9880"

func init() { registry.RegisterVoice(gptSoVITSKind{}) }

// gptSoVITSKind is tts.provider: gpt-sovits.
type gptSoVITSKind struct{}

var _ Kind = gptSoVITSKind{}

func (gptSoVITSKind) Name() string { return "gpt-sovits" }
func (gptSoVITSKind) About() string {
	return "a GPT-SoVITS api_v2 server (tts.base_url, a reference audio per emotion in tts.refs)"
}

// CheckTTS defaults tts.base_url and checks the references and the format.
func (gptSoVITSKind) CheckTTS(t *config.TTS, bad registry.Fault) {
	if t.BaseURL == "" {
		t.BaseURL = DefaultGPTSoVITSURL
	}
	if len(t.Refs) == 0 {
		bad("tts.refs", "gpt-sovits needs a reference audio: add refs: {neutral: {audio: /path/on/the/server.wav, text: what it says, lang: zh}}")
	}
	for emo, r := range t.Refs {
		if strings.TrimSpace(r.Audio) == "" || strings.TrimSpace(r.Lang) == "" {
			bad("tts.refs."+emo, "needs audio (a path on the GPT-SoVITS machine) and lang (zh, ja, en, …)")
		} else if _, ok := GPTSoVITSLanguage(r.Lang); !ok {
			bad("tts.refs."+emo+".lang", "%q is not a language GPT-SoVITS api_v2 knows; use one of %s", r.Lang, strings.Join(GPTSoVITSLanguages(), ", "))
		}
	}
	checkFormat(t, bad, "wav", "ogg", "aac")
}

func (gptSoVITSKind) Make(c config.TTS) (Provider, error) {
	refs := map[string]Reference{}
	for emo, r := range c.Refs {
		refs[emo] = Reference{Audio: r.Audio, Text: r.Text, Lang: r.Lang}
	}
	return NewGPTSoVITS(GPTSoVITSOptions{BaseURL: c.BaseURL, Refs: refs, MediaType: c.Format})
}

func (gptSoVITSKind) Ready(c config.TTS, p Provider) (string, error) {
	return p.Name() + " at " + c.BaseURL, nil
}

func (gptSoVITSKind) Fix(c config.TTS, err error) string {
	return serverFix(c, err, " (python api_v2.py -a 127.0.0.1 -p 9880)")
}

// gptSoVITSLanguages are the languages GPT-SoVITS's api_v2 accepts as
// text_lang and prompt_lang: tts_config.languages of a v2 model
// (GPT_SoVITS/TTS_infer_pack/TTS.py, v2_languages, at commit
// 48b1a0169a28582a8984402f82cf438d3bfa6aca; api_v2.py checks
// text_lang.lower() and prompt_lang.lower() against it). A v1 model
// accepts auto, en, zh, ja, all_zh and all_ja of them.
const gptSoVITSLanguages = "auto auto_yue en zh ja yue ko all_zh all_ja all_yue all_ko"

// GPTSoVITSLanguages lists the language codes api_v2 accepts.
func GPTSoVITSLanguages() []string { return strings.Fields(gptSoVITSLanguages) }

// GPTSoVITSLanguage is the api_v2 code for a language: one of its own
// codes passes as it is (all_zh, auto_yue, …, any case); a tag folds to its
// base (zh-CN → zh, ja_JP → ja, zh-HK → yue; cn → zh, jp → ja, kr → ko).
// ok is false when it names no language api_v2 knows.
func GPTSoVITSLanguage(l string) (code string, ok bool) {
	l = strings.ToLower(strings.TrimSpace(l))
	if slices.Contains(GPTSoVITSLanguages(), l) {
		return l, true
	}
	switch l {
	case "cn":
		return "zh", true
	case "jp":
		return "ja", true
	case "kr":
		return "ko", true
	}
	if i := strings.IndexAny(l, "-_"); i > 0 {
		base := l[:i]
		if base == "zh" && (strings.Contains(l, "yue") || strings.Contains(l, "hk")) {
			base = "yue"
		}
		if slices.Contains(GPTSoVITSLanguages(), base) {
			return base, true
		}
	}
	return "", false
}

func (g *GPTSoVITS) ref(emotion string) Reference {
	for _, k := range []string{strings.ToLower(emotion), "neutral", "default"} {
		if r, ok := g.o.Refs[k]; ok {
			return r
		}
	}
	keys := make([]string, 0, len(g.o.Refs))
	for k := range g.o.Refs {
		keys = append(keys, k)
	}
	// No neutral one: the first by name, so the choice is stable.
	first := keys[0]
	for _, k := range keys {
		first = min(first, k)
	}
	return g.o.Refs[first]
}

// VoiceOf implements Provider.
func (g *GPTSoVITS) VoiceOf(r Request) string {
	ref := g.ref(r.Emotion)
	return fmt.Sprintf("%s|%s|%s|%s|%s|%g", g.o.BaseURL, ref.Audio, ref.Text, ref.Lang, g.o.MediaType, g.o.SpeedFactor)
}

// gptSoVITSRequest is api_v2's TTS_Request, the fields cyan sets (the
// server fills the rest with its defaults).
type gptSoVITSRequest struct {
	Text            string  `json:"text"`
	TextLang        string  `json:"text_lang"`
	RefAudioPath    string  `json:"ref_audio_path"`
	PromptText      string  `json:"prompt_text"`
	PromptLang      string  `json:"prompt_lang"`
	TextSplitMethod string  `json:"text_split_method"`
	MediaType       string  `json:"media_type"`
	StreamingMode   bool    `json:"streaming_mode"`
	SpeedFactor     float64 `json:"speed_factor"`
}

// Synthesize implements Provider. When the emotion's own reference fails
// (its file is missing on the server: api_v2 answers 400 "tts failed"), the
// segment is made again with the neutral reference, so a missing
// refs/happy.wav costs the voice its happy tone, not the sentence.
func (g *GPTSoVITS) Synthesize(ctx context.Context, r Request) (Audio, error) {
	if strings.TrimSpace(r.Text) == "" {
		return Audio{}, &Error{Provider: g.Name(), Msg: "nothing to say: the text is empty"}
	}
	ref := g.ref(r.Emotion)
	a, err := g.synthesizeWith(ctx, r, ref)
	if neutral := g.ref(DefaultEmotion); err != nil && ctx.Err() == nil && neutral != ref {
		if a2, err2 := g.synthesizeWith(ctx, r, neutral); err2 == nil {
			return a2, nil
		}
	}
	return a, err
}

// TryReference makes a short clip with exactly the reference of emotion, no
// fallback: cyan doctor tries every configured reference with it.
func (g *GPTSoVITS) TryReference(ctx context.Context, emotion, text string) error {
	r, ok := g.o.Refs[emotion]
	if !ok {
		return fmt.Errorf("no reference for %q", emotion)
	}
	_, err := g.synthesizeWith(ctx, Request{Text: text, Language: r.Lang, Emotion: emotion}, r)
	return err
}

// References lists the emotions that have a reference, sorted.
func (g *GPTSoVITS) References() []string {
	out := make([]string, 0, len(g.o.Refs))
	for k := range g.o.Refs {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func (g *GPTSoVITS) synthesizeWith(ctx context.Context, r Request, ref Reference) (Audio, error) {
	lang := sovitsLang(r.Language)
	body := gptSoVITSRequest{Text: r.Text, TextLang: lang, RefAudioPath: ref.Audio, PromptText: ref.Text,
		PromptLang: promptLang(ref.Lang), TextSplitMethod: "cut5", MediaType: g.o.MediaType, SpeedFactor: g.o.SpeedFactor}
	return post(ctx, g.o.Client, g.Name(), g.url, nil, body, g.o.MediaType, func(b []byte) string {
		var e struct {
			Message   string `json:"message"`
			Exception string `json:"Exception"`
			Detail    any    `json:"detail"` // FastAPI's own validation errors (422)
		}
		if json.Unmarshal(b, &e) != nil {
			return ""
		}
		switch {
		case e.Exception != "":
			return e.Message + ": " + e.Exception
		case e.Message != "":
			return e.Message
		case e.Detail != nil:
			d, _ := json.Marshal(e.Detail)
			return string(d)
		}
		return ""
	})
}

var _ Provider = (*GPTSoVITS)(nil)
