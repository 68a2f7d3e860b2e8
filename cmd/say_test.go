package cmd

import (
	"bytes"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/ttstest"
	"github.com/cyan-agent/cyan/tts"
)

func sayEnv(t *testing.T, yaml string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	env := map[string]string{"CYAN_DATA_DIR": filepath.Join(dir, "data"), "HOME": dir}
	if yaml != "" {
		f := filepath.Join(dir, "cyan.yaml")
		if err := os.WriteFile(f, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		env["CYAN_CONFIG"] = f
	}
	return env
}

func runCmd(env map[string]string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	rc := Main(args, IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Env: func(k string) string { return env[k] }})
	return rc, out.String(), errb.String()
}

func TestSayWritesAWAV(t *testing.T) {
	fake := &ttstest.GPTSoVITS{}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	env := sayEnv(t, "tts:\n  provider: gpt-sovits\n  base_url: "+srv.URL+"\n  refs: {neutral: {audio: /r/calm.wav, text: 你好呀, lang: zh}}\n")
	out := filepath.Join(t.TempDir(), "hello.wav")
	rc, stdout, stderr := runCmd(env, "say", "你好，我是青蓝。こんにちは！Nice to meet you.", "--out", out)
	if rc != 0 {
		t.Fatalf("rc=%d %s %s", rc, stdout, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	w, err := tts.ParseWAV(b)
	if err != nil || w.Duration() < time.Second {
		t.Fatalf("the file is %+v (%v)", w, err)
	}
	if !strings.Contains(stderr, "[ja excited] こんにちは！") || len(fake.Requests()) != 3 {
		t.Errorf("segments: %s, %d requests", stderr, len(fake.Requests()))
	}
	if rc, _, stderr := runCmd(env, "say", " "); rc != 2 || !strings.Contains(stderr, "the text is empty") {
		t.Errorf("no text: rc=%d %s", rc, stderr)
	}
}

func TestDoctorSaysHowToFixTheVoice(t *testing.T) {
	tests := []struct {
		name, yaml, want, fix string
		fail                  bool
	}{
		{"espeak-ng missing", "tts: {binary: espeak-ng-missing}\n", "[warn] voice", "apt-get install espeak-ng", false},
		{"server down", "tts:\n  provider: openai\n  base_url: http://127.0.0.1:1/v1\n", "[FAIL] voice", "start the openai server at http://127.0.0.1:1/v1", true},
		{"off", "tts: {provider: off}\n", "[ok  ] voice     off", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := loadConfig(IO{Env: func(k string) string { return sayEnv(t, tt.yaml)[k] }})
			if err != nil {
				t.Fatal(err)
			}
			c := checkVoice(cfg, 5*time.Second)
			var out bytes.Buffer
			report(IO{Stdout: &out}, []check{c}, false)
			if !strings.Contains(out.String(), tt.want) || !strings.Contains(out.String(), tt.fix) || (!c.ok && !c.warn) != tt.fail {
				t.Errorf("doctor says:\n%s", out.String())
			}
		})
	}
	if _, err := exec.LookPath("espeak-ng"); err == nil {
		cfg, _ := loadConfig(IO{Env: func(k string) string { return sayEnv(t, "")[k] }})
		if c := checkVoice(cfg, 10*time.Second); !c.ok || !strings.Contains(c.msg, "speaks") {
			t.Errorf("espeak-ng: %+v", c)
		}
	}
}

// TestSayPlaysWithSox: with no PipeWire, PulseAudio or ALSA player on the
// PATH, cyan say plays with sox's play (quietly, the WAV as its argument)
// and says so; with none at all it says which it tried and what to do.
func TestSayPlaysWithSox(t *testing.T) {
	fake := &ttstest.GPTSoVITS{}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	env := sayEnv(t, "tts:\n  provider: gpt-sovits\n  base_url: "+srv.URL+"\n  refs: {neutral: {audio: /r/calm.wav, text: 你好呀, lang: zh}}\n")
	bin := t.TempDir()
	log := filepath.Join(t.TempDir(), "args")
	script := "#!/bin/sh\necho \"$@\" > " + log + "\nhead -c 4 \"$2\" >> " + log + "\n"
	if err := os.WriteFile(filepath.Join(bin, "play"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(bin, "aplay"), []byte("not executable"), 0o644)
	env["PATH"] = bin
	rc, stdout, stderr := runCmd(env, "say", "你好。")
	if rc != 0 || !strings.Contains(stderr, "playing with play (sox)") {
		t.Fatalf("rc=%d %s %s", rc, stdout, stderr)
	}
	got, err := os.ReadFile(log)
	if err != nil || !strings.HasPrefix(string(got), "-q ") || !strings.Contains(string(got), ".wav\nRIFF") {
		t.Errorf("play got %q (%v)", got, err)
	}

	env["PATH"] = t.TempDir()
	rc, _, stderr = runCmd(env, "say", "你好。")
	if rc == 0 || !strings.Contains(stderr, "no audio player found (tried pw-play, paplay, aplay, play, afplay, ffplay)") || !strings.Contains(stderr, "sox") {
		t.Errorf("no player: rc=%d %s", rc, stderr)
	}
}
