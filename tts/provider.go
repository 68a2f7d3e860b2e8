package tts

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"strings"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/registry"
)

// Request is one segment to synthesize.
type Request struct {
	Text     string
	Language string // zh, ja, en, yue, ko, …
	Emotion  string
	// Voice names a voice of the provider for this request, overriding the
	// configured one ("" keeps it).
	Voice string
}

// Audio is synthesized sound.
type Audio struct {
	Data []byte
	// Type is its MIME type (audio/wav, audio/mpeg, …).
	Type string
}

// Provider speaks text. Synthesize must honour ctx.
type Provider interface {
	// Name names the provider in errors, logs and cache keys.
	Name() string
	// VoiceOf names everything besides the text that decides the sound
	// of r (voice, reference audio, speed, format): the cache key's voice.
	VoiceOf(r Request) string
	Synthesize(ctx context.Context, r Request) (Audio, error)
}

// ErrOff is returned when the voice is turned off (tts.provider: off).
var ErrOff = errors.New("tts: the voice is off (tts.provider: off); set tts.provider to another voice (cyan help config lists them)")

// Error is a failed synthesis. Fix says what the user can do.
type Error struct {
	Provider string
	// Unavailable: the program is missing or the server does not answer,
	// as opposed to a refusal of this one text.
	Unavailable bool
	Msg, Fix    string
	Err         error
}

func (e *Error) Error() string {
	s := fmt.Sprintf("tts: %s: %s", e.Provider, e.Msg)
	if e.Fix != "" {
		s += " (" + e.Fix + ")"
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Unavailable reports whether err says the voice cannot be reached at all
// (program missing, server down) rather than refusing one text.
func Unavailable(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Unavailable
}

// New builds the provider the configuration names (tts.provider: a
// registered Kind; "" is espeak-ng); "off" gives a provider that always
// fails with ErrOff.
func New(c config.TTS) (Provider, error) {
	k, err := KindOf(c.Provider)
	if err != nil {
		return nil, err
	}
	return k.Make(c)
}

func init() { registry.RegisterVoice(offKind{}) }

// offKind is tts.provider: off — no voice; replies stay text.
type offKind struct{}

var _ Kind = offKind{}

func (offKind) Name() string                               { return "off" }
func (offKind) About() string                              { return "no voice: replies stay text" }
func (offKind) CheckTTS(*config.TTS, registry.Fault)       {}
func (offKind) Make(config.TTS) (Provider, error)          { return off{}, nil }
func (offKind) Ready(config.TTS, Provider) (string, error) { return "", ErrOff }
func (offKind) Fix(config.TTS, error) string               { return "" }

type off struct{}

func (off) Name() string                                       { return "off" }
func (off) VoiceOf(Request) string                             { return "" }
func (off) Synthesize(context.Context, Request) (Audio, error) { return Audio{}, ErrOff }

// mediaType is the MIME type of an audio format name, or of a server's
// Content-Type when it names an audio type.
func mediaType(format, served string) string {
	if t, _, err := mime.ParseMediaType(served); err == nil && strings.HasPrefix(t, "audio/") {
		if t == "audio/x-wav" || t == "audio/wave" {
			return "audio/wav"
		}
		return t
	}
	switch format {
	case "mp3":
		return "audio/mpeg"
	case "opus", "ogg":
		return "audio/ogg"
	case "aac":
		return "audio/aac"
	case "flac":
		return "audio/flac"
	case "pcm", "raw":
		return "audio/L16"
	}
	return "audio/wav"
}

// language folds a language tag to its base (the seed's cn → zh, zh-CN →
// zh, ja_JP → ja).
func language(l string) string {
	l = strings.ToLower(NormalizeLanguage(l))
	if i := strings.IndexAny(l, "-_"); i > 0 {
		base := l[:i]
		if base == "zh" && (strings.Contains(l, "yue") || strings.Contains(l, "hk")) {
			return "yue"
		}
		return base
	}
	return l
}
