package config

import (
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/glob"
	"github.com/cyan-agent/cyan/registry"
)

// TTS selects and tunes the voice (package tts): which provider speaks,
// in which channels, with which voice per language.
type TTS struct {
	// Provider is espeak-ng (offline, the default; needs the espeak-ng
	// program), gpt-sovits (a GPT-SoVITS api_v2 server), openai (any
	// OpenAI-compatible /v1/audio/speech server) or off.
	Provider string `yaml:"provider"`
	// Channels are the voiced channels (channel patterns, * and ?, as package glob matches them): replies and
	// proactive messages there are spoken. The page's channel is desktop.
	Channels []string `yaml:"channels"`
	// Voices maps a language (zh, ja, en, yue, ko, …) to the provider's
	// voice for it: an espeak-ng voice (cmn, yue, ja, en-us), an OpenAI
	// voice name. Unlisted languages use the built-in choice or Voice.
	Voices map[string]string `yaml:"voices"`
	// Voice is the voice when Voices names none (openai: e.g. alloy).
	Voice string `yaml:"voice"`
	// BaseURL is the server: gpt-sovits http://127.0.0.1:9880 by default;
	// openai its /v1 base (required).
	BaseURL string `yaml:"base_url"`
	// Model is the openai speech model (default tts-1).
	Model  string `yaml:"model"`
	APIKey string `yaml:"api_key" secret:"true"`
	// Format is the audio format asked of gpt-sovits (media_type) or openai
	// (response_format): wav (default), or one the browser plays (ogg,
	// aac; openai also mp3, opus, flac).
	Format string `yaml:"format"`
	// Binary is the espeak-ng program (default: espeak-ng on PATH).
	Binary string `yaml:"binary"`
	// Refs are gpt-sovits's reference audio per emotion ("neutral" or
	// "default" serves every emotion without its own).
	Refs map[string]TTSRef `yaml:"refs"`
	// Timeout bounds one synthesis.
	Timeout Duration `yaml:"timeout"`
	// CacheMB bounds the audio cache (by provider, voice and text).
	CacheMB int `yaml:"cache_mb"`
	// Actions is what the voice does with a reply's *actions*: skip
	// (default), speak (read in the reply's voice) or narrate (read by the
	// Narrator voice).
	Actions string `yaml:"actions"`
	// Narrator is the second voice that narrates actions: an espeak-ng or
	// OpenAI voice name; gpt-sovits narrates with refs.narration (or its
	// neutral reference when there is none). Empty: the reply's voice.
	Narrator string `yaml:"narrator"`
	// BridgeMode is what a voiced chat on a bridge (QQ, Telegram) gets:
	// both (default: the text, then a voice message), voice (the voice
	// message instead; the text when the voice fails) or text.
	BridgeMode string `yaml:"bridge_mode"`
}

// TTSRef is a GPT-SoVITS reference: an audio file on the server's machine,
// what it says and in which language.
type TTSRef struct {
	Audio string `yaml:"audio"`
	Text  string `yaml:"text"`
	Lang  string `yaml:"lang"`
}

// Default voice settings.
const (
	DefaultTTSChannel = "desktop"
)

func defaultTTS() TTS {
	return TTS{Provider: "espeak-ng", Channels: []string{DefaultTTSChannel}, Format: "wav", Actions: "skip", BridgeMode: "both",
		Timeout: Duration(60 * time.Second), CacheMB: 64}
}

var voiceName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_+./-]{0,63}$`)

// VoiceSettings is what config asks of a voice provider (a
// registry.Voice): to complete and check the tts: section when
// tts.provider names it — its defaults (a server's URL, a model), the keys
// only it reads (gpt-sovits's refs) and the formats it can give.
type VoiceSettings interface {
	registry.Voice
	CheckTTS(t *TTS, bad registry.Fault)
}

func (c *Config) validateTTS(bad func(key, format string, args ...any)) {
	t := c.TTS
	v, ok := registry.VoiceOf(t.Provider)
	if !ok {
		bad("tts.provider", "%q is not a voice; use one of %s", t.Provider, strings.Join(registry.VoiceNames(), ", "))
	} else if vs, ok := v.(VoiceSettings); ok {
		vs.CheckTTS(&c.TTS, bad)
	}
	t = c.TTS
	if c.TTS.BaseURL != "" {
		if u, err := url.Parse(c.TTS.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("tts.base_url", "%q is not an http(s) URL", c.TTS.BaseURL)
		}
	}
	for lang, v := range t.Voices {
		if !voiceName.MatchString(v) {
			bad("tts.voices."+lang, "%q is not a voice name (letters, digits and _+./-)", v)
		}
	}
	switch t.Actions {
	case "":
		c.TTS.Actions = "skip"
	case "skip", "speak", "narrate":
	default:
		bad("tts.actions", "%q is not a choice; use skip (actions unsaid), speak (read with the reply) or narrate (read by tts.narrator)", t.Actions)
	}
	switch t.BridgeMode {
	case "":
		c.TTS.BridgeMode = "both"
	case "both", "voice", "text":
	default:
		bad("tts.bridge_mode", "%q is not a choice; use both (text, then a voice message), voice (a voice message; text when it fails) or text", t.BridgeMode)
	}
	if t.Narrator != "" && !voiceName.MatchString(t.Narrator) {
		bad("tts.narrator", "%q is not a voice name (letters, digits and _+./-)", t.Narrator)
	}
	if t.Voice != "" && !voiceName.MatchString(t.Voice) {
		bad("tts.voice", "%q is not a voice name (letters, digits and _+./-)", t.Voice)
	}
	for i, ch := range t.Channels {
		if err := glob.CheckChannel(strings.TrimSpace(ch)); err != nil {
			bad("tts.channels", "entry %d: %v", i, err)
		}
	}
	if t.Timeout <= 0 || time.Duration(t.Timeout) > 10*time.Minute {
		bad("tts.timeout", "must be from 1s to 10m")
	}
	if t.CacheMB < 0 || t.CacheMB > 4096 {
		bad("tts.cache_mb", "%d is out of range 0–4096", t.CacheMB)
	}
}

// TimeoutDuration is the synthesis timeout as a time.Duration.
func (t TTS) TimeoutDuration() time.Duration { return time.Duration(t.Timeout) }
