package tts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/registry"
)

// OpenAIOptions configure NewOpenAI.
type OpenAIOptions struct {
	// BaseURL is the /v1 base of the server (required).
	BaseURL string
	// Model is the speech model (default tts-1).
	Model string
	// Voice is the voice (default alloy); Voices picks one per language.
	Voice  string
	Voices map[string]string
	APIKey string
	// Format is the response_format: wav (default), mp3, opus, aac, flac.
	Format string
	Client *http.Client
}

// OpenAI speaks through an OpenAI-compatible POST /v1/audio/speech
// ({model, input, voice, response_format}): OpenAI itself and the local
// servers that copy its API (Kokoro-FastAPI, openedai-speech, …). A
// gpt-4o speech model (gpt-4o-mini-tts) is also told the segment's
// emotion as instructions ("Speak in a happy, cheerful tone.").
type OpenAI struct {
	o   OpenAIOptions
	url string
}

// MaxOpenAIInput is the API's limit on one input, in characters.
const MaxOpenAIInput = 4096

// NewOpenAI checks the options and makes the provider.
func NewOpenAI(o OpenAIOptions) (*OpenAI, error) {
	if o.BaseURL == "" {
		return nil, errors.New("tts: openai needs tts.base_url (the server's /v1 base)")
	}
	if o.Model == "" {
		o.Model = "tts-1"
	}
	if o.Voice == "" {
		o.Voice = "alloy"
	}
	if o.Format == "" {
		o.Format = "wav"
	}
	if o.Client == nil {
		o.Client = &http.Client{}
	}
	v := map[string]string{}
	for k, x := range o.Voices {
		v[language(k)] = x
	}
	o.Voices = v
	return &OpenAI{o: o, url: strings.TrimRight(o.BaseURL, "/") + "/audio/speech"}, nil
}

// Name implements Provider.
func (p *OpenAI) Name() string { return "openai" }

func init() { registry.RegisterVoice(openAIKind{}) }

// openAIKind is tts.provider: openai.
type openAIKind struct{}

var _ Kind = openAIKind{}

func (openAIKind) Name() string { return "openai" }
func (openAIKind) About() string {
	return "any OpenAI-compatible /v1/audio/speech server (tts.base_url, tts.model, tts.voice)"
}

// CheckTTS requires tts.base_url, defaults the model and the voice and
// checks the format.
func (openAIKind) CheckTTS(t *config.TTS, bad registry.Fault) {
	if t.BaseURL == "" {
		bad("tts.base_url", "is empty; name the speech server's /v1 base, e.g. http://127.0.0.1:8880/v1")
	}
	if t.Model == "" {
		t.Model = "tts-1"
	}
	if t.Voice == "" && len(t.Voices) == 0 {
		t.Voice = "alloy"
	}
	checkFormat(t, bad, "wav", "mp3", "opus", "aac", "flac")
}

func (openAIKind) Make(c config.TTS) (Provider, error) {
	return NewOpenAI(OpenAIOptions{BaseURL: c.BaseURL, Model: c.Model, Voice: c.Voice, Voices: c.Voices,
		APIKey: c.APIKey, Format: c.Format})
}

func (openAIKind) Ready(c config.TTS, p Provider) (string, error) {
	return p.Name() + " at " + c.BaseURL, nil
}

func (openAIKind) Fix(c config.TTS, err error) string { return serverFix(c, err, "") }

func (p *OpenAI) voice(r Request) string {
	if r.Voice != "" {
		return r.Voice
	}
	if v, ok := p.o.Voices[language(r.Language)]; ok {
		return v
	}
	return p.o.Voice
}

// VoiceOf implements Provider.
func (p *OpenAI) VoiceOf(r Request) string {
	return fmt.Sprintf("%s|%s|%s|%s|%s", p.o.BaseURL, p.o.Model, p.voice(r), p.o.Format, p.instructions(r))
}

type openAISpeechRequest struct {
	Model          string `json:"model"`
	Input          string `json:"input"`
	Voice          string `json:"voice"`
	ResponseFormat string `json:"response_format"`
	Instructions   string `json:"instructions,omitempty"`
}

// emotionInstructions say a segment's emotion to a model that takes
// instructions (gpt-4o-mini-tts and its snapshots; tts-1 and tts-1-hd do
// not). neutral says nothing.
var emotionInstructions = map[string]string{
	"happy":     "Speak in a happy, cheerful tone.",
	"excited":   "Speak excitedly, with energy.",
	"gentle":    "Speak gently and warmly, softly.",
	"sad":       "Speak in a sad, quiet tone.",
	"ask":       "Speak as someone asking a question, curious.",
	"surprised": "Speak with surprise.",
	"angry":     "Speak in an annoyed, angry tone.",
	Narration:   "Narrate calmly, like a storyteller describing what someone does.",
}

// instructions is what the model is told of r's emotion ("" for a model
// without instructions or an emotion without a line).
func (p *OpenAI) instructions(r Request) string {
	if !strings.Contains(strings.ToLower(p.o.Model), "gpt-4o") {
		return ""
	}
	return emotionInstructions[strings.ToLower(r.Emotion)]
}

// Synthesize implements Provider.
func (p *OpenAI) Synthesize(ctx context.Context, r Request) (Audio, error) {
	if strings.TrimSpace(r.Text) == "" {
		return Audio{}, &Error{Provider: p.Name(), Msg: "nothing to say: the text is empty"}
	}
	if n := len([]rune(r.Text)); n > MaxOpenAIInput {
		return Audio{}, &Error{Provider: p.Name(), Msg: fmt.Sprintf("the text has %d characters; the API takes at most %d", n, MaxOpenAIInput)}
	}
	h := http.Header{}
	if p.o.APIKey != "" {
		h.Set("Authorization", "Bearer "+p.o.APIKey)
	}
	body := openAISpeechRequest{Model: p.o.Model, Input: r.Text, Voice: p.voice(r), ResponseFormat: p.o.Format, Instructions: p.instructions(r)}
	return post(ctx, p.o.Client, p.Name(), p.url, h, body, p.o.Format, func(b []byte) string {
		var e struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
			Detail any `json:"detail"`
		}
		if json.Unmarshal(b, &e) != nil {
			return ""
		}
		if e.Error.Message != "" {
			return e.Error.Message
		}
		if e.Detail != nil {
			d, _ := json.Marshal(e.Detail)
			return string(d)
		}
		return ""
	})
}

var _ Provider = (*OpenAI)(nil)
