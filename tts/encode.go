package tts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// Encoder turns a WAV into OGG/Opus, the format of a Telegram voice
// message, with a program of the system: ffmpeg built with libopus, or
// opusenc (opus-tools). FindEncoder picks one at start.
type Encoder struct {
	// Name is the program's name ("ffmpeg", "opusenc"), for doctor and
	// logs; "" when none was found.
	Name string
	// Path is the program run.
	Path string
}

// ErrNoEncoder is Encode without an encoder found.
var ErrNoEncoder = errors.New("tts: no OGG/Opus encoder found: install ffmpeg (with libopus) or opus-tools (apt-get install ffmpeg opus-tools)")

// FindEncoder looks for ffmpeg with libopus, then opusenc, on PATH. The
// zero Encoder (Name "") means none: voice messages on Telegram cannot be
// made, and replies there stay text.
func FindEncoder() Encoder {
	if p, err := exec.LookPath("ffmpeg"); err == nil {
		out, _ := exec.Command(p, "-hide_banner", "-encoders").Output()
		if bytes.Contains(out, []byte("libopus")) {
			return Encoder{Name: "ffmpeg", Path: p}
		}
	}
	if p, err := exec.LookPath("opusenc"); err == nil {
		return Encoder{Name: "opusenc", Path: p}
	}
	return Encoder{}
}

// maxEncoded bounds an encoder's output: far past a minute of speech at
// voice bitrates, and below the Bot API's 50 MB upload.
const maxEncoded = 20 << 20

// Encode turns audio (WAV, or anything the encoder reads) into OGG/Opus,
// mono at 48 kHz. It checks the result starts as an Ogg stream with an
// Opus head.
func (e Encoder) Encode(ctx context.Context, a Audio) (Audio, error) {
	if e.Path == "" {
		return Audio{}, ErrNoEncoder
	}
	var args []string
	switch e.Name {
	case "ffmpeg":
		args = []string{"-hide_banner", "-loglevel", "error", "-i", "pipe:0", "-vn", "-ac", "1", "-ar", "48000", "-c:a", "libopus", "-b:a", "32k", "-f", "ogg", "pipe:1"}
	case "opusenc":
		args = []string{"--quiet", "--bitrate", "32", "--downmix-mono", "-", "-"}
	default:
		return Audio{}, fmt.Errorf("tts: unknown encoder %q", e.Name)
	}
	cmd := exec.CommandContext(ctx, e.Path, args...)
	cmd.Stdin = bytes.NewReader(a.Data)
	var out, errb bytes.Buffer
	cmd.Stdout = &limited{w: &out, n: maxEncoded}
	cmd.Stderr = &limited{w: &errb, n: 4096}
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return Audio{}, ctx.Err()
		}
		return Audio{}, fmt.Errorf("tts: %s could not encode OGG/Opus: %v: %s", e.Name, err, strings.TrimSpace(errb.String()))
	}
	b := out.Bytes()
	if !IsOggOpus(b) {
		return Audio{}, fmt.Errorf("tts: %s did not make an OGG/Opus stream (%d bytes)", e.Name, len(b))
	}
	return Audio{Data: b, Type: "audio/ogg"}, nil
}

// IsOggOpus reports whether b begins an Ogg stream whose first packet is
// an Opus identification header ("OggS" page, "OpusHead" packet: RFC
// 7845 section 5.1).
func IsOggOpus(b []byte) bool {
	if len(b) < 27 || string(b[:4]) != "OggS" {
		return false
	}
	segs := int(b[26])
	start := 27 + segs
	return len(b) >= start+8 && string(b[start:start+8]) == "OpusHead"
}

// limited writes at most n bytes to w, then fails.
type limited struct {
	w interface{ Write([]byte) (int, error) }
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if len(p) > l.n {
		return 0, errors.New("encoder output too large")
	}
	l.n -= len(p)
	return l.w.Write(p)
}

// ToWAV turns audio of another format (an OGG or AAC voice) into a 16-bit
// WAV, for platforms that take WAV (QQ's records); only ffmpeg can, since
// opusenc only encodes.
func (e Encoder) ToWAV(ctx context.Context, a Audio) (Audio, error) {
	if e.Name != "ffmpeg" {
		return Audio{}, fmt.Errorf("tts: turning %s into WAV needs ffmpeg (apt-get install ffmpeg), or set tts.format: wav", Sniff(a.Data))
	}
	cmd := exec.CommandContext(ctx, e.Path, "-hide_banner", "-loglevel", "error", "-i", "pipe:0", "-vn", "-c:a", "pcm_s16le", "-f", "wav", "pipe:1")
	cmd.Stdin = bytes.NewReader(a.Data)
	var out, errb bytes.Buffer
	cmd.Stdout = &limited{w: &out, n: maxEncoded * 4}
	cmd.Stderr = &limited{w: &errb, n: 4096}
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return Audio{}, ctx.Err()
		}
		return Audio{}, fmt.Errorf("tts: ffmpeg could not make a WAV: %v: %s", err, strings.TrimSpace(errb.String()))
	}
	if Sniff(out.Bytes()) != "wav" {
		return Audio{}, errors.New("tts: ffmpeg did not make a WAV")
	}
	return Audio{Data: out.Bytes(), Type: "audio/wav"}, nil
}
