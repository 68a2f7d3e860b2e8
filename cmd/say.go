package cmd

import (
	"cmp"
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
// preference, and their arguments before the file: PipeWire's, PulseAudio's
// and ALSA's, sox's play, macOS's, ffmpeg's.
var players = [][]string{
	{"pw-play"}, {"paplay"}, {"aplay", "-q"}, {"play", "-q"}, {"afplay"}, {"ffplay", "-nodisp", "-autoexit", "-loglevel", "quiet"},
}

// playerNames names the players for people.
var playerNames = map[string]string{"play": "play (sox)", "pw-play": "pw-play (PipeWire)", "paplay": "paplay (PulseAudio)", "aplay": "aplay (ALSA)", "ffplay": "ffplay (FFmpeg)"}

// findPlayer is the first of players found in the directories of path (a
// PATH list), and the names of those tried before it.
func findPlayer(path string) (bin string, args []string, tried []string) {
	for _, p := range players {
		for _, dir := range filepath.SplitList(path) {
			if dir == "" {
				dir = "."
			}
			f := filepath.Join(dir, p[0])
			if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
				return f, p[1:], tried
			}
		}
		tried = append(tried, p[0])
	}
	return "", nil, tried
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
		path := io.Env("PATH")
		if path == "" {
			path = os.Getenv("PATH")
		}
		return play(ctx, io, path, audio)
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

// play plays audio with the first audio player found in path, and says
// which on stderr.
func play(ctx context.Context, io IO, path string, a tts.Audio) error {
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
	bin, args, tried := findPlayer(path)
	if bin == "" {
		return fmt.Errorf("no audio player found (tried %s); write the audio to a file with --out file.wav, or install pipewire, pulseaudio-utils, alsa-utils or sox", strings.Join(tried, ", "))
	}
	name := filepath.Base(bin)
	fmt.Fprintf(io.Stderr, "playing with %s\n", cmp.Or(playerNames[name], name))
	cmd := exec.CommandContext(ctx, bin, append(args, f.Name())...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s could not play the audio: %v %s", name, err, strings.TrimSpace(string(out)))
	}
	return nil
}
