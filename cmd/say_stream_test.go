//go:build linux

package cmd

import (
	"bufio"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/ttstest"
)

// TestSayPlaysTheFirstClipWhileTheRestAreMade: cyan say plays each
// segment's clip as soon as it is made. The voice holds the second
// segment's clip until the player has played the first; a say that made
// the whole text before playing would wait for it until its --timeout and
// fail.
func TestSayPlaysTheFirstClipWhileTheRestAreMade(t *testing.T) {
	played, stop := make(chan struct{}), make(chan struct{})
	fake := &ttstest.GPTSoVITS{
		Wait: func(text string, _ time.Duration) {
			if !strings.Contains(text, "你好") {
				select {
				case <-played:
				case <-stop: // the test failed
				}
			}
		},
	}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	defer close(stop)
	env := sayEnv(t, "tts:\n  provider: gpt-sovits\n  base_url: "+srv.URL+"\n  refs: {neutral: {audio: /r/calm.wav, text: 你好呀, lang: zh}}\n")

	// The player tells, through a FIFO, that it played its first clip; each
	// play is logged with the head of its file.
	dir := t.TempDir()
	fifo, log := filepath.Join(dir, "fifo"), filepath.Join(dir, "log")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		f, err := os.Open(fifo) // until the player opens it to write
		if err != nil {
			return
		}
		defer f.Close()
		bufio.NewReader(f).ReadString('\n')
		close(played)
	}()
	bin := t.TempDir()
	script := "#!/bin/sh\nfirst=no\n[ -e " + log + " ] || first=yes\nhead -c 4 \"$2\" >> " + log + "\necho >> " + log +
		"\n[ $first = yes ] && echo played > " + fifo + "\nexit 0\n"
	if err := os.WriteFile(filepath.Join(bin, "play"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	env["PATH"] = bin
	rc, stdout, stderr := runCmd(env, "say", "你好，我是青蓝。こんにちは！Nice to meet you.", "--timeout", "30s")
	if rc != 0 {
		t.Fatalf("rc=%d %s %s", rc, stdout, stderr)
	}
	got, err := os.ReadFile(log)
	if err != nil || string(got) != "RIFF\nRIFF\nRIFF\n" {
		t.Errorf("the player played %q (%v), want three WAV clips", got, err)
	}
	if strings.Count(stderr, "playing with play (sox)") != 1 || len(fake.Requests()) != 3 {
		t.Errorf("stderr %s; %d requests", stderr, len(fake.Requests()))
	}
	// the segments are told as they are played, in order
	if a, b := strings.Index(stderr, "你好"), strings.Index(stderr, "Nice to meet you"); a < 0 || b < a {
		t.Errorf("stderr: %s", stderr)
	}
}
