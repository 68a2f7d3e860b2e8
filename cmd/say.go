package cmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

// player is an audio player found on the PATH: its file, its arguments
// before the audio file, and its name for people.
type player struct {
	bin  string
	args []string
	name string
}

// findPlayer is the first of players found in the directories of path (a
// PATH list); with none, an error that says which were tried and what to
// install.
func findPlayer(path string) (player, error) {
	var tried []string
	for _, p := range players {
		for _, dir := range filepath.SplitList(path) {
			if dir == "" {
				dir = "."
			}
			f := filepath.Join(dir, p[0])
			if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
				return player{bin: f, args: p[1:], name: cmp.Or(playerNames[p[0]], p[0])}, nil
			}
		}
		tried = append(tried, p[0])
	}
	return player{}, fmt.Errorf("no audio player found (tried %s); write the audio to a file with --out file.wav, or install pipewire, pulseaudio-utils, alsa-utils or sox", strings.Join(tried, ", "))
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
		segs := tts.Split(text)
		if len(segs) == 0 {
			return errors.New("the text holds nothing to say")
		}
		var p player
		if *out == "" {
			// the player is found before anything is made: without one,
			// nothing is worth making
			path := io.Env("PATH")
			if path == "" {
				path = os.Getenv("PATH")
			}
			if p, err = findPlayer(path); err != nil {
				return err
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), *timeout)
		defer cancel()
		err = sayOut(ctx, io, cfg.TTS, segs, *voice, *out, p)
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("the voice did not finish within --timeout %s (%w); give it longer (--timeout 5m), or check it with cyan doctor", *timeout, err)
		}
		return err
	}
}

// sayOut voices segs and plays them with p, or writes them to out.
func sayOut(ctx context.Context, io IO, c config.TTS, segs []packets.Segment, voice, out string, p player) error {
	v, err := sayVoice(c)
	if err != nil {
		return err
	}
	defer v.Close()
	if out == "" {
		fmt.Fprintf(io.Stderr, "playing with %s\n", p.name)
		return sayAloud(ctx, io, v, segs, voice, p)
	}
	clips, err := v.Say(ctx, segs, voice)
	if err != nil {
		return err
	}
	audio := make([]tts.Audio, len(clips))
	for i, c := range clips {
		printSegment(io, c.Segment)
		audio[i] = c.Audio
	}
	joined, err := tts.Join(audio)
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, joined.Data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	fmt.Fprintf(io.Stdout, "%s: %d bytes of %s\n", out, len(joined.Data), joined.Type)
	return nil
}

// sayVoice is the configured provider's voice, for one command.
func sayVoice(c config.TTS) (*tts.Voice, error) {
	p, err := tts.New(c)
	if err != nil {
		return nil, err
	}
	return tts.NewVoice(tts.Options{Provider: p, Cache: tts.NewCache(0), Timeout: c.TimeoutDuration()})
}

// printSegment tells a segment as it is voiced: its language, its emotion
// and its text.
func printSegment(io IO, s packets.Segment) {
	fmt.Fprintf(io.Stderr, "[%s %s] %s\n", s.Language, s.Emotion, s.Text)
}

// sayAloud plays each segment's clip as soon as it and those before it are
// made, while the next are being made: the first words sound after the
// first segment's synthesis, not the whole text's (a long text on a slow
// voice such as GPT-SoVITS on a CPU takes seconds a sentence). The first
// failure, of the voice or of the player, ends it.
func sayAloud(ctx context.Context, io IO, v *tts.Voice, segs []packets.Segment, voice string, p player) error {
	var err error
	v.Each(ctx, segs, voice, func(i int, c tts.Clip, e error) bool {
		if e != nil {
			err = fmt.Errorf("segment %d (%q): %w", i+1, segs[i].Text, e)
			return false
		}
		printSegment(io, c.Segment)
		err = p.play(ctx, c.Audio)
		return err == nil
	})
	if err == nil {
		err = ctx.Err()
	}
	return err
}

// play plays one clip: written to a temporary file (players take files;
// not all read a stream), played to its end.
func (p player) play(ctx context.Context, a tts.Audio) error {
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
	if err := f.Close(); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, p.bin, append(slices.Clip(p.args), f.Name())...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s could not play the audio: %v %s", p.name, err, strings.TrimSpace(string(out)))
	}
	return nil
}
