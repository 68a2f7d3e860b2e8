package tts

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Join makes one audio of several, in order, as a Stream does, with the
// WAV's sizes filled in: 16-bit WAVs become one WAV at the first clip's
// rate and channels (the others resampled); MP3 and AAC (ADTS) frames are
// concatenated, Ogg streams chained (a chained Ogg file is valid, players
// play it through); any other mix is an error. One clip is returned as it
// is.
func Join(clips []Audio) (Audio, error) {
	switch len(clips) {
	case 0:
		return Audio{}, errors.New("tts: nothing to join")
	case 1:
		return clips[0], nil
	}
	var s Stream
	var out []byte
	for i, c := range clips {
		b, err := s.Next(c)
		if err != nil {
			if i == 0 {
				return Audio{}, err
			}
			return Audio{}, fmt.Errorf("tts: clip %d: %w", i+1, err)
		}
		out = append(out, b...)
	}
	if s.Type() == "audio/wav" {
		binary.LittleEndian.PutUint32(out[4:], uint32(len(out)-8))
		binary.LittleEndian.PutUint32(out[40:], uint32(len(out)-wavHeaderSize))
	}
	return Audio{Data: out, Type: s.Type()}, nil
}

// wavHeaderSize is the size of PCMWAV's header.
const wavHeaderSize = 44

// maxClip bounds a resampled clip (a server's odd WAV header could ask for
// gigabytes): 64 MiB is over ten minutes of 48 kHz stereo.
const maxClip = 64 << 20

// Stream turns clips into one audio stream as they come, to be written
// out at once (POST /api/v1/speech with "stream"): the first clip sets the
// type. 16-bit PCM WAVs become one WAV whose RIFF and data sizes are
// 0xFFFFFFFF — a streaming writer's "until the end", which sox, ffmpeg
// and ParseWAV read as the rest of the stream — at the first clip's
// rate and channels, the others resampled to it; MP3 and AAC (ADTS)
// frames follow one another, Ogg streams are chained. Its zero value is
// ready.
type Stream struct {
	typ            string
	rate, channels int
}

// Type is the stream's Content-Type ("" before the first clip).
func (s *Stream) Type() string { return s.typ }

// Next is the bytes that carry a after the clips before it: for the first
// clip of a WAV stream, the header too. A clip that cannot follow (another
// type, a WAV that is not 16-bit PCM) is an error and changes nothing, so
// the stream may go on without it.
func (s *Stream) Next(a Audio) ([]byte, error) {
	if s.typ != "" && a.Type != s.typ {
		return nil, fmt.Errorf("tts: cannot join %s and %s audio; ask for one segment at a time", s.typ, a.Type)
	}
	switch a.Type {
	case "audio/mpeg", "audio/aac", "audio/ogg":
		s.typ = a.Type
		return a.Data, nil
	case "audio/wav":
	default:
		return nil, fmt.Errorf("tts: cannot join %s audio; ask for one segment at a time, or use the wav format", a.Type)
	}
	w, err := ParseWAV(a.Data)
	if err != nil {
		return nil, err
	}
	if w.Format != 1 || w.BitsPerSample != 16 {
		return nil, fmt.Errorf("tts: cannot join WAVs of format %d, %d bits (only 16-bit PCM); ask for one segment at a time", w.Format, w.BitsPerSample)
	}
	data := a.Data[w.DataOffset : w.DataOffset+w.DataSize]
	data = data[:len(data)-len(data)%(2*w.Channels)] // whole frames: the next clip's samples stay aligned
	if s.typ == "" {
		s.typ, s.rate, s.channels = a.Type, w.SampleRate, w.Channels
		out := PCMWAV(nil, w.SampleRate, w.Channels)
		binary.LittleEndian.PutUint32(out[4:], 0xFFFFFFFF)
		binary.LittleEndian.PutUint32(out[40:], 0xFFFFFFFF)
		return append(out, data...), nil
	}
	if w.Channels != s.channels || w.SampleRate != s.rate {
		// A clip of another rate or channel count (a fallback voice,
		// a server's 16 kHz answer) is resampled to the first's.
		if out := int64(len(data)/2/w.Channels) * int64(s.rate) / int64(w.SampleRate) * int64(2*s.channels); out > maxClip {
			return nil, fmt.Errorf("tts: a clip of %d Hz, %d channels would make %d MiB at %d Hz, %d channels", w.SampleRate, w.Channels, out>>20, s.rate, s.channels)
		}
		data = convertPCM(data, w.SampleRate, w.Channels, s.rate, s.channels)
	}
	return data, nil
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
