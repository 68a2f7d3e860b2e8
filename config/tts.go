package config

import (
	"github.com/cyan-agent/cyan/glob"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
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
	DefaultGPTSoVITSURL = "http://127.0.0.1:9880"
	DefaultTTSChannel   = "desktop"
)

func defaultTTS() TTS {
	return TTS{Provider: "espeak-ng", Channels: []string{DefaultTTSChannel}, Format: "wav",
		Timeout: Duration(60 * time.Second), CacheMB: 64}
}

var voiceName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_+./-]{0,63}$`)

func (c *Config) validateTTS(bad func(key, format string, args ...any)) {
	t := c.TTS
	switch t.Provider {
	case "espeak-ng", "off":
	case "gpt-sovits":
		if t.BaseURL == "" {
			c.TTS.BaseURL = DefaultGPTSoVITSURL
		}
		if len(t.Refs) == 0 {
			bad("tts.refs", "gpt-sovits needs a reference audio: add refs: {neutral: {audio: /path/on/the/server.wav, text: what it says, lang: zh}}")
		}
		for emo, r := range t.Refs {
			if strings.TrimSpace(r.Audio) == "" || strings.TrimSpace(r.Lang) == "" {
				bad("tts.refs."+emo, "needs audio (a path on the GPT-SoVITS machine) and lang (zh, ja, en, …)")
			}
		}
	case "openai":
		if t.BaseURL == "" {
			bad("tts.base_url", "is empty; name the speech server's /v1 base, e.g. http://127.0.0.1:8880/v1")
		}
		if t.Model == "" {
			c.TTS.Model = "tts-1"
		}
		if t.Voice == "" && len(t.Voices) == 0 {
			c.TTS.Voice = "alloy"
		}
	default:
		bad("tts.provider", "%q is not a voice; use espeak-ng (offline), gpt-sovits, openai or off", t.Provider)
	}
	if c.TTS.BaseURL != "" {
		if u, err := url.Parse(c.TTS.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("tts.base_url", "%q is not an http(s) URL", c.TTS.BaseURL)
		}
	}
	formats := []string{"wav", "ogg", "aac"}
	if t.Provider == "openai" {
		formats = []string{"wav", "mp3", "opus", "aac", "flac"}
	}
	if t.Provider != "espeak-ng" && t.Provider != "off" && !slices.Contains(formats, t.Format) {
		bad("tts.format", "%q is not one of %s", t.Format, strings.Join(formats, ", "))
	}
	for lang, v := range t.Voices {
		if !voiceName.MatchString(v) {
			bad("tts.voices."+lang, "%q is not a voice name (letters, digits and _+./-)", v)
		}
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
