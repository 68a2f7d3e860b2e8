package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/config"
)

// doctor names the OGG/Opus encoder the bridges' voice messages use, and
// warns when a bridge chat is voiced and none is installed.
func TestDoctorNamesTheVoiceEncoder(t *testing.T) {
	cfg := config.Defaults()
	cfg.TTS.Channels = []string{"desktop", "tg:*"}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "opusenc"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	if c := checkVoiceEncoder(&cfg); !c.ok || !strings.Contains(c.msg, "OGG/Opus by opusenc") {
		t.Errorf("with opusenc: %+v", c)
	}
	t.Setenv("PATH", t.TempDir())
	if c := checkVoiceEncoder(&cfg); c.ok || !c.warn || !strings.Contains(c.fix, "opus-tools") {
		t.Errorf("with none: %+v", c)
	}
	cfg.TTS.Channels = []string{"desktop"}
	if c := checkVoiceEncoder(&cfg); !c.ok || !strings.Contains(c.msg, "no bridge chat is voiced") {
		t.Errorf("page only: %+v", c)
	}
}
