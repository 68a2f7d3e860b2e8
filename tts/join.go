package tts

import (
	"errors"
	"fmt"
)

// Join makes one audio of several, in order: WAVs of one format become one
// WAV; MP3 frames are concatenated; any other mix is an error.
func Join(clips []Audio) (Audio, error) {
	switch len(clips) {
	case 0:
		return Audio{}, errors.New("tts: nothing to join")
	case 1:
		return clips[0], nil
	}
	typ := clips[0].Type
	for _, c := range clips[1:] {
		if c.Type != typ {
			return Audio{}, fmt.Errorf("tts: cannot join %s and %s audio; ask for one segment at a time", typ, c.Type)
		}
	}
	switch typ {
	case "audio/mpeg":
		var out []byte
		for _, c := range clips {
			out = append(out, c.Data...)
		}
		return Audio{Data: out, Type: typ}, nil
	case "audio/wav":
	default:
		return Audio{}, fmt.Errorf("tts: cannot join %s audio; ask for one segment at a time, or use the wav format", typ)
	}
	first, err := ParseWAV(clips[0].Data)
	if err != nil {
		return Audio{}, err
	}
	if first.Format != 1 || first.BitsPerSample != 16 {
		return Audio{}, fmt.Errorf("tts: cannot join WAVs of format %d, %d bits; ask for one segment at a time", first.Format, first.BitsPerSample)
	}
	var pcm []byte
	for i, c := range clips {
		w, err := ParseWAV(c.Data)
		if err != nil {
			return Audio{}, fmt.Errorf("tts: clip %d: %w", i+1, err)
		}
		if w.Format != first.Format || w.Channels != first.Channels || w.SampleRate != first.SampleRate || w.BitsPerSample != first.BitsPerSample {
			return Audio{}, fmt.Errorf("tts: clip %d is %d Hz × %d channels, the first %d Hz × %d; ask for one segment at a time", i+1, w.SampleRate, w.Channels, first.SampleRate, first.Channels)
		}
		pcm = append(pcm, c.Data[w.DataOffset:w.DataOffset+w.DataSize]...)
	}
	return Audio{Data: PCMWAV(pcm, first.SampleRate, first.Channels), Type: "audio/wav"}, nil
}
