package config

import (
	"strings"
	"testing"
)

// config check accepts the language codes GPT-SoVITS api_v2 defines, and
// tts.actions / tts.narrator; it refuses what api_v2 would refuse.
func TestTTSLanguagesAndActions(t *testing.T) {
	dir := t.TempDir()
	c, err := Load(envOf(map[string]string{EnvDataDir: dir, EnvConfig: "testdata/tts.good.yml"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.TTS.Actions != "narrate" || c.TTS.Narrator != "en-gb" || c.TTS.Refs["sad"].Lang != "auto_yue" {
		t.Fatalf("tts %+v", c.TTS)
	}
	if d, err := Load(envOf(map[string]string{EnvDataDir: dir})); err != nil || d.TTS.Actions != "skip" {
		t.Fatalf("the default actions: %+v %v", d.TTS, err)
	}
	_, err = Load(envOf(map[string]string{EnvDataDir: dir, EnvConfig: "testdata/tts.bad.yml"}))
	if err == nil {
		t.Fatal("tts.bad.yml loaded")
	}
	for _, want := range []string{
		`tts.bad.yml:3: tts.actions: "mime" is not a choice; use skip`,
		`tts.refs.neutral.lang: "all" is not a language GPT-SoVITS api_v2 knows; use one of auto, auto_yue, en, zh, ja, yue, ko, all_zh, all_ja, all_yue, all_ko`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error lacks %q:\n%v", want, err)
		}
	}
}

// tts.bridge_mode defaults to both and refuses what is not a choice.
func TestTTSBridgeMode(t *testing.T) {
	dir := t.TempDir()
	if c, err := Load(envOf(map[string]string{EnvDataDir: dir})); err != nil || c.TTS.BridgeMode != "both" {
		t.Fatalf("the default bridge mode: %q %v", c.TTS.BridgeMode, err)
	}
	for mode, ok := range map[string]bool{"voice": true, "text": true, "both": true, "audio": false} {
		c := Defaults()
		c.TTS.BridgeMode = mode
		var got []string
		c.validateTTS(func(key, format string, args ...any) { got = append(got, key) })
		if ok != (len(got) == 0) {
			t.Errorf("bridge_mode %q: faults %v", mode, got)
		}
		if !ok && got[0] != "tts.bridge_mode" {
			t.Errorf("bridge_mode %q: fault at %v", mode, got)
		}
	}
}
