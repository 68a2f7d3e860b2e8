package tts

import (
	"errors"
	"fmt"
)

// Join makes one audio of several, in order: 16-bit WAVs become one WAV
// at the first clip's rate and channels (the others resampled); MP3 and AAC (ADTS) frames are concatenated, Ogg streams chained (a
// chained Ogg file is valid, players play it through); any other mix is
// an error.
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
	case "audio/mpeg", "audio/aac", "audio/ogg":
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
		if w.Format != first.Format || w.BitsPerSample != first.BitsPerSample {
			return Audio{}, fmt.Errorf("tts: clip %d is format %d, %d bits, the first format %d, %d bits; ask for one segment at a time", i+1, w.Format, w.BitsPerSample, first.Format, first.BitsPerSample)
		}
		data := c.Data[w.DataOffset : w.DataOffset+w.DataSize]
		if w.Channels != first.Channels || w.SampleRate != first.SampleRate {
			// A clip of another rate or channel count (a fallback voice,
			// a server's 16 kHz answer) is resampled to the first's.
			data = convertPCM(data, w.SampleRate, w.Channels, first.SampleRate, first.Channels)
		}
		pcm = append(pcm, data...)
	}
	return Audio{Data: PCMWAV(pcm, first.SampleRate, first.Channels), Type: "audio/wav"}, nil
}

// Sniff names the format of audio by its first bytes: wav, ogg, mp3, aac,
// flac, or "" when it is none of them (raw PCM, text, an error page).
func Sniff(data []byte) string {
	switch {
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WAVE":
		return "wav"
	case len(data) >= 4 && string(data[:4]) == "OggS":
		return "ogg"
	case len(data) >= 4 && string(data[:4]) == "fLaC":
		return "flac"
	case len(data) >= 3 && string(data[:3]) == "ID3":
		return "mp3"
	case len(data) >= 2 && data[0] == 0xFF && data[1]&0xF6 == 0xF0:
		return "aac" // ADTS: sync word, layer 00
	case len(data) >= 2 && data[0] == 0xFF && data[1]&0xE0 == 0xE0:
		return "mp3" // an MPEG audio frame
	}
	return ""
}
