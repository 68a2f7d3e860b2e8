package tts_test

import (
	"context"
	"os/exec"
	"testing"

	"github.com/cyan-agent/cyan/tts"
)

// Each encoder turns espeak-ng's WAV into an Ogg stream with an Opus
// head (what Telegram's sendVoice takes as a voice message).
func TestEncodeOggOpus(t *testing.T) {
	requireTool(t, "espeak-ng")
	e := tts.NewEspeak(tts.EspeakOptions{})
	wav, err := e.Synthesize(context.Background(), tts.Request{Text: "Hello there.", Language: "en"})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ffmpeg", "opusenc"} {
		t.Run(name, func(t *testing.T) {
			requireTool(t, name)
			path, _ := exec.LookPath(name)
			enc := tts.Encoder{Name: name, Path: path}
			got, err := enc.Encode(context.Background(), wav)
			if err != nil {
				t.Fatal(err)
			}
			if !tts.IsOggOpus(got.Data) || got.Type != "audio/ogg" {
				t.Fatalf("%s made %d bytes of %q, not OGG/Opus", name, len(got.Data), got.Type)
			}
		})
	}
	// an OGG voice back to WAV, for QQ's records (ffmpeg only)
	if path, err := exec.LookPath("ffmpeg"); err == nil {
		enc := tts.Encoder{Name: "ffmpeg", Path: path}
		ogg, err := enc.Encode(context.Background(), wav)
		if err != nil {
			t.Fatal(err)
		}
		back, err := enc.ToWAV(context.Background(), ogg)
		if err != nil || tts.Sniff(back.Data) != "wav" {
			t.Fatalf("ToWAV: %v, %d bytes", err, len(back.Data))
		}
	}
	if _, err := (tts.Encoder{Name: "opusenc", Path: "opusenc"}).ToWAV(context.Background(), wav); err == nil {
		t.Fatal("opusenc made a WAV")
	}
	if _, err := (tts.Encoder{}).Encode(context.Background(), wav); err != tts.ErrNoEncoder {
		t.Fatalf("no encoder: %v", err)
	}
	if _, err := (tts.Encoder{Name: "ffmpeg", Path: "ffmpeg"}).Encode(context.Background(), tts.Audio{Data: []byte("not audio")}); err == nil {
		t.Fatal("ffmpeg encoded garbage")
	}
}

// FindEncoder finds one when ffmpeg or opusenc is installed.
func TestFindEncoder(t *testing.T) {
	requireTool(t, "opusenc")
	if e := tts.FindEncoder(); e.Name == "" {
		t.Fatal("no encoder found with opusenc installed")
	}
}

func FuzzIsOggOpus(f *testing.F) {
	f.Add([]byte("OggS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x13OpusHead"))
	f.Add([]byte("OggS"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if tts.IsOggOpus(b) && string(b[:4]) != "OggS" {
			t.Fatal("not Ogg")
		}
	})
}
