package tts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/registry"
)

// EspeakVoices are the espeak-ng voices of each language unless the
// configuration says otherwise.
var EspeakVoices = map[string]string{"zh": "cmn", "yue": "yue", "ja": "ja", "en": "en-us", "ko": "ko"}

// EspeakOptions configure NewEspeak.
type EspeakOptions struct {
	// Binary is the program (default "espeak-ng", looked up on PATH).
	Binary string
	// Voices maps a language to a voice, over EspeakVoices.
	Voices map[string]string
	// Voice is the voice of a language no map names (default en-us).
	Voice string
}

// Espeak speaks through the espeak-ng program: offline, instant, robotic.
// It runs `espeak-ng -v VOICE -s SPEED -p PITCH -w FILE -- TEXT` (the
// --stdout WAV of some versions carries a bogus size, so the audio goes
// through a temporary file). The emotion moves pitch and speed a little.
type Espeak struct {
	bin    string
	voices map[string]string
	voice  string
}

// NewEspeak makes the provider; a missing program shows at the first
// synthesis (and in cyan doctor), not here.
func NewEspeak(o EspeakOptions) *Espeak {
	e := &Espeak{bin: o.Binary, voices: map[string]string{}, voice: o.Voice}
	if e.bin == "" {
		e.bin = "espeak-ng"
	}
	for k, v := range EspeakVoices {
		e.voices[k] = v
	}
	for k, v := range o.Voices {
		e.voices[language(k)] = v
	}
	if e.voice == "" {
		e.voice = "en-us"
	}
	return e
}

// Name implements Provider.
func (e *Espeak) Name() string { return "espeak-ng" }

func init() { registry.RegisterVoice(espeakKind{}) }

// espeakKind is tts.provider: espeak-ng, the default.
type espeakKind struct{}

var _ Kind = espeakKind{}

func (espeakKind) Name() string { return "espeak-ng" }
func (espeakKind) About() string {
	return "the espeak-ng program: offline, the default (tts.binary, tts.voices)"
}
func (espeakKind) CheckTTS(*config.TTS, registry.Fault) {}
func (espeakKind) Make(c config.TTS) (Provider, error) {
	return NewEspeak(EspeakOptions{Binary: c.Binary, Voices: c.Voices, Voice: c.Voice}), nil
}

// Ready is the program's path, or an Unavailable *Error when it is missing.
func (espeakKind) Ready(_ config.TTS, p Provider) (string, error) {
	e, ok := p.(*Espeak)
	if !ok {
		return p.Name(), nil
	}
	return e.Path()
}

func (espeakKind) Fix(_ config.TTS, err error) string {
	var e *Error
	if errors.As(err, &e) && e.Unavailable {
		return "install the Debian package espeak-ng (apt-get install espeak-ng), set tts.binary, or choose another tts.provider"
	}
	return ""
}

// MaxEspeakRunes bounds one synthesis's text.
const MaxEspeakRunes = 4000

func (e *Espeak) voiceFor(r Request) string {
	if r.Voice != "" {
		return r.Voice
	}
	if v, ok := e.voices[language(r.Language)]; ok {
		return v
	}
	return e.voice
}

// prosody is the speed (words per minute) and pitch (0–99) of an emotion.
func prosody(emotion string) (speed, pitch int) {
	switch strings.ToLower(emotion) {
	case "happy", "excited":
		return 185, 62
	case "surprised":
		return 180, 70
	case "sad":
		return 150, 38
	case "angry":
		return 190, 45
	case "gentle":
		return 160, 52
	case "ask":
		return 175, 56
	}
	return 175, 50
}

// VoiceOf implements Provider.
func (e *Espeak) VoiceOf(r Request) string {
	s, p := prosody(r.Emotion)
	return fmt.Sprintf("%s s%d p%d", e.voiceFor(r), s, p)
}

// Path is the program that runs, or an error saying how to install it.
func (e *Espeak) Path() (string, error) {
	p, err := exec.LookPath(e.bin)
	if err != nil {
		return "", &Error{Provider: e.Name(), Unavailable: true, Err: err,
			Msg: fmt.Sprintf("the program %s is not installed", e.bin),
			Fix: "install the Debian package espeak-ng (apt-get install espeak-ng), set tts.binary, or choose another tts.provider"}
	}
	return p, nil
}

// Synthesize implements Provider.
func (e *Espeak) Synthesize(ctx context.Context, r Request) (Audio, error) {
	text := strings.TrimSpace(r.Text)
	if text == "" {
		return Audio{}, &Error{Provider: e.Name(), Msg: "nothing to say: the text is empty"}
	}
	if n := len([]rune(text)); n > MaxEspeakRunes {
		return Audio{}, &Error{Provider: e.Name(), Msg: fmt.Sprintf("the text has %d characters; say at most %d at a time", n, MaxEspeakRunes)}
	}
	bin, err := e.Path()
	if err != nil {
		return Audio{}, err
	}
	voice := e.voiceFor(r)
	if !validVoice(voice) {
		return Audio{}, &Error{Provider: e.Name(), Msg: fmt.Sprintf("%q is not a voice name", voice)}
	}
	f, err := os.CreateTemp("", "cyan-espeak-*.wav")
	if err != nil {
		return Audio{}, fmt.Errorf("tts: espeak-ng: temporary file: %w", err)
	}
	path := f.Name()
	f.Close()
	defer os.Remove(path)
	speed, pitch := prosody(r.Emotion)
	cmd := exec.CommandContext(ctx, bin, "-v", voice, "-s", strconv.Itoa(speed), "-p", strconv.Itoa(pitch), "-w", path, "--", text)
	var stderr bytes.Buffer
	cmd.Stderr, cmd.Stdout = &stderr, &stderr
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return Audio{}, ctx.Err()
		}
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		fix := ""
		if strings.Contains(msg, "voice") {
			fix = fmt.Sprintf("the voice %q is unknown to espeak-ng: 'espeak-ng --voices' lists them; set tts.voices", voice)
		}
		return Audio{}, &Error{Provider: e.Name(), Msg: msg, Fix: fix, Err: err}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Audio{}, fmt.Errorf("tts: espeak-ng: read its output: %w", err)
	}
	if _, err := ParseWAV(data); err != nil {
		return Audio{}, &Error{Provider: e.Name(), Msg: "it wrote no valid WAV: " + err.Error(), Err: err}
	}
	return Audio{Data: data, Type: "audio/wav"}, nil
}

func validVoice(v string) bool {
	if v == "" || len(v) > 64 || strings.HasPrefix(v, "-") {
		return false
	}
	return !strings.ContainsFunc(v, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_+./-", r))
	})
}

var _ Provider = (*Espeak)(nil)
