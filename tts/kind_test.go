package tts

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/registry"
)

// chimeKind is a voice declared as espeak.go, gptsovits.go and openai.go
// declare theirs — from a test, with nothing else changed: config checks
// tts: through it, New builds it, Ready and Fix speak for it.
type chimeKind struct{}

func init() { registry.RegisterVoice(chimeKind{}) }

var _ Kind = chimeKind{}

var errChimeDown = &Error{Provider: "chimetest", Unavailable: true, Msg: "the bell is down"}

func (chimeKind) Name() string  { return "chimetest" }
func (chimeKind) About() string { return "a bell, for the tests" }
func (chimeKind) CheckTTS(t *config.TTS, bad registry.Fault) {
	if t.Voice == "" {
		t.Voice = "bell"
	}
	checkFormat(t, bad, "wav")
}
func (chimeKind) Make(c config.TTS) (Provider, error) { return chime{voice: c.Voice}, nil }
func (chimeKind) Ready(c config.TTS, _ Provider) (string, error) {
	if c.BaseURL != "" {
		return "", errChimeDown
	}
	return "the bell " + c.Voice, nil
}
func (chimeKind) Fix(_ config.TTS, err error) string {
	if errors.Is(err, errChimeDown) {
		return "ring it by hand"
	}
	return ""
}

type chime struct{ voice string }

func (c chime) Name() string           { return "chimetest" }
func (c chime) VoiceOf(Request) string { return c.voice }
func (c chime) Synthesize(context.Context, Request) (Audio, error) {
	return Audio{Data: []byte("RIFF"), Type: "audio/wav"}, nil
}

func loadTTS(t *testing.T, yaml string) (*config.Config, error) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "cyan.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{config.EnvConfig: path, config.EnvDataDir: filepath.Join(dir, "data")}
	return config.Load(func(k string) string { return env[k] })
}

func TestAVoiceIsOnlyItsDeclaration(t *testing.T) {
	c, err := loadTTS(t, "tts: {provider: chimetest}\n")
	if err != nil {
		t.Fatal(err)
	}
	if c.TTS.Voice != "bell" {
		t.Errorf("the voice's default was not filled: %+v", c.TTS)
	}
	p, err := New(c.TTS)
	if err != nil || p.Name() != "chimetest" {
		t.Fatalf("New = %v, %v", p, err)
	}
	if where, err := Ready(c.TTS, p); err != nil || where != "the bell bell" {
		t.Errorf("Ready = %q, %v", where, err)
	}
	c.TTS.BaseURL = "http://127.0.0.1:1"
	if _, err := Ready(c.TTS, p); !Unavailable(err) || Fix(c.TTS, err) != "ring it by hand" {
		t.Errorf("Ready with the bell down = %v, fix %q", err, Fix(c.TTS, err))
	}
	_, err = loadTTS(t, "tts: {provider: chimetest, format: mp3}\n")
	if err == nil || !strings.Contains(err.Error(), `tts.format: "mp3" is not one of wav`) {
		t.Errorf("the voice's own check: %v", err)
	}
	_, err = loadTTS(t, "tts: {provider: bell}\n")
	if err == nil || !strings.Contains(err.Error(), "chimetest") || !strings.Contains(err.Error(), "espeak-ng") {
		t.Errorf("an unknown provider's error lists the registered voices: %v", err)
	}
}
