package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/tts"
)

// players are the programs cyan say plays audio with, in order of
// preference, and their arguments before the file.
var players = [][]string{
	{"pw-play"}, {"paplay"}, {"aplay", "-q"}, {"afplay"}, {"ffplay", "-nodisp", "-autoexit", "-loglevel", "quiet"},
}

// sayCmd speaks a text with the configured voice, without the daemon: it
// writes the audio to --out, or plays it.
func sayCmd(f *flags) run {
	out := f.String("out", "", "write the audio to this `file` (WAV for espeak-ng) instead of playing it")
	voice := f.String("voice", "", "a `voice` of the provider (espeak-ng: cmn, yue, ja, en-us, …)")
	timeout := f.Duration("timeout", time.Minute, "how long the voice may take")
	return func(io IO, pos []string) error {
		text := strings.TrimSpace(strings.Join(pos, " "))
		if text == "" {
			return &usageError{msg: "the text is empty; e.g. cyan say '你好，我是青蓝。Nice to meet you.' --out hello.wav"}
		}
		cfg, err := loadConfig(io)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), *timeout)
		defer cancel()
		audio, segs, err := say(ctx, cfg.TTS, text, *voice)
		if err != nil {
			return err
		}
		for _, s := range segs {
			fmt.Fprintf(io.Stderr, "[%s %s] %s\n", s.Language, s.Emotion, s.Text)
		}
		if *out != "" {
			if err := os.WriteFile(*out, audio.Data, 0o644); err != nil {
				return fmt.Errorf("write %s: %w", *out, err)
			}
			fmt.Fprintf(io.Stdout, "%s: %d bytes of %s\n", *out, len(audio.Data), audio.Type)
			return nil
		}
		return play(ctx, audio)
	}
}

// say cuts text by the rules and voices it with the configured provider.
func say(ctx context.Context, c config.TTS, text, voice string) (tts.Audio, []packets.Segment, error) {
	p, err := tts.New(c)
	if err != nil {
		return tts.Audio{}, nil, err
	}
	v, err := tts.NewVoice(tts.Options{Provider: p, Cache: tts.NewCache(0), Timeout: c.TimeoutDuration()})
	if err != nil {
		return tts.Audio{}, nil, err
	}
	defer v.Close()
	segs := tts.Split(text)
	if len(segs) == 0 {
		return tts.Audio{}, nil, errors.New("the text holds nothing to say")
	}
	clips, err := v.Say(ctx, segs, voice)
	if err != nil {
		return tts.Audio{}, nil, err
	}
	audio := make([]tts.Audio, len(clips))
	for i, c := range clips {
		audio[i] = c.Audio
	}
	joined, err := tts.Join(audio)
	return joined, segs, err
}

// play plays audio with the first audio player found.
func play(ctx context.Context, a tts.Audio) error {
	ext := ".wav"
	if a.Type != "audio/wav" {
		ext = ".audio"
	}
	f, err := os.CreateTemp("", "cyan-say-*"+ext)
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(a.Data); err != nil {
		f.Close()
		return err
	}
	f.Close()
	var tried []string
	for _, p := range players {
		bin, err := exec.LookPath(p[0])
		if err != nil {
			tried = append(tried, p[0])
			continue
		}
		cmd := exec.CommandContext(ctx, bin, append(p[1:], f.Name())...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s could not play the audio: %v %s", filepath.Base(bin), err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	return fmt.Errorf("no audio player found (tried %s); write the audio to a file with --out file.wav, or install pipewire, pulseaudio-utils or alsa-utils", strings.Join(tried, ", "))
}
