package tts

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// WAV describes a RIFF/WAVE file's format and its sound data.
type WAV struct {
	Format        uint16 // 1 PCM, 3 IEEE float, 0xFFFE extensible
	Channels      int
	SampleRate    int
	BitsPerSample int
	// DataOffset and DataSize locate the samples in the file.
	DataOffset, DataSize int
}

// Duration is how long the sound plays.
func (w WAV) Duration() time.Duration {
	frame := w.Channels * w.BitsPerSample / 8
	if frame <= 0 || w.SampleRate <= 0 {
		return 0
	}
	return time.Duration(w.DataSize/frame) * time.Second / time.Duration(w.SampleRate)
}

// ErrNotWAV is returned for bytes that are not a RIFF/WAVE file.
var ErrNotWAV = errors.New("tts: not a WAV file")

// ParseWAV reads a WAV file's header and checks that its chunks are
// consistent: RIFF size within the file, a fmt chunk before the data, a
// data chunk whose size fits (a streaming writer's 0 or 0xFFFFFFFF size
// is taken as "to the end of the file").
func ParseWAV(b []byte) (WAV, error) {
	var w WAV
	if len(b) < 12 || string(b[0:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return w, ErrNotWAV
	}
	if riff := binary.LittleEndian.Uint32(b[4:8]); riff != 0xFFFFFFFF && riff != 0 && int64(riff)+8 > int64(len(b)) {
		return w, fmt.Errorf("%w: the RIFF size says %d bytes, the file has %d", ErrNotWAV, int64(riff)+8, len(b))
	}
	haveFmt := false
	for off := 12; off+8 <= len(b); {
		id := string(b[off : off+4])
		size := int64(binary.LittleEndian.Uint32(b[off+4 : off+8]))
		body := off + 8
		switch id {
		case "fmt ":
			if size < 16 || int64(body)+size > int64(len(b)) {
				return w, fmt.Errorf("%w: a fmt chunk of %d bytes", ErrNotWAV, size)
			}
			f := b[body:]
			w.Format = binary.LittleEndian.Uint16(f[0:2])
			w.Channels = int(binary.LittleEndian.Uint16(f[2:4]))
			w.SampleRate = int(binary.LittleEndian.Uint32(f[4:8]))
			w.BitsPerSample = int(binary.LittleEndian.Uint16(f[14:16]))
			// (a rate over 768 kHz or more than 32 channels is no voice's,
			// and resampling to it would make gigabytes)
			if w.Channels == 0 || w.SampleRate == 0 || w.BitsPerSample == 0 || w.Channels > 32 || w.SampleRate > 768000 {
				return w, fmt.Errorf("%w: %d channels, %d Hz, %d bits", ErrNotWAV, w.Channels, w.SampleRate, w.BitsPerSample)
			}
			haveFmt = true
		case "data":
			if !haveFmt {
				return w, fmt.Errorf("%w: the data chunk comes before fmt", ErrNotWAV)
			}
			rest := int64(len(b) - body)
			if size == 0xFFFFFFFF || size == 0 && rest > 0 {
				size = rest
			}
			if size > rest {
				return w, fmt.Errorf("%w: the data chunk says %d bytes, %d are there", ErrNotWAV, size, rest)
			}
			w.DataOffset, w.DataSize = body, int(size)
			return w, nil
		}
		next := int64(body) + size + size%2
		if next > int64(len(b)) {
			break
		}
		off = int(next)
	}
	return w, fmt.Errorf("%w: no data chunk", ErrNotWAV)
}

// PCMWAV wraps 16-bit little-endian PCM samples in a WAV header.
func PCMWAV(pcm []byte, sampleRate, channels int) []byte {
	out := make([]byte, 44, 44+len(pcm))
	copy(out[0:], "RIFF")
	binary.LittleEndian.PutUint32(out[4:], uint32(36+len(pcm)))
	copy(out[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(out[16:], 16)
	binary.LittleEndian.PutUint16(out[20:], 1)
	binary.LittleEndian.PutUint16(out[22:], uint16(channels))
	binary.LittleEndian.PutUint32(out[24:], uint32(sampleRate))
	binary.LittleEndian.PutUint32(out[28:], uint32(sampleRate*channels*2))
	binary.LittleEndian.PutUint16(out[32:], uint16(channels*2))
	binary.LittleEndian.PutUint16(out[34:], 16)
	copy(out[36:], "data")
	binary.LittleEndian.PutUint32(out[40:], uint32(len(pcm)))
	return append(out, pcm...)
}

// silenceFloor is the loudest a 16-bit sample of a silent clip gets:
// GPT-SoVITS's api_v2 answers a failed inference with 200 and a second of
// exact zeros; a little dither or DC offset stays silence.
const silenceFloor = 16

// Silent reports whether audio is a 16-bit PCM WAV with sound data whose
// every sample is within silenceFloor of zero. Audio of any other format,
// or with no data, is not judged (false).
func Silent(a Audio) bool {
	w, err := ParseWAV(a.Data)
	if err != nil || w.Format != 1 || w.BitsPerSample != 16 || w.DataSize < 2 {
		return false
	}
	data := a.Data[w.DataOffset : w.DataOffset+w.DataSize]
	for i := 0; i+1 < len(data); i += 2 {
		s := int16(binary.LittleEndian.Uint16(data[i:]))
		if s > silenceFloor || s < -silenceFloor {
			return false
		}
	}
	return true
}

// convertPCM resamples 16-bit PCM from one rate and channel count to
// another (linear interpolation; channels mixed down by their mean or
// copied up), so clips of different formats join into one WAV.
func convertPCM(pcm []byte, rate, channels, toRate, toChannels int) []byte {
	frames := len(pcm) / 2 / channels
	if frames == 0 || rate <= 0 || toRate <= 0 {
		return nil
	}
	sample := func(f, c int) float64 {
		f = min(max(f, 0), frames-1)
		return float64(int16(binary.LittleEndian.Uint16(pcm[(f*channels+c)*2:])))
	}
	mono := func(f int) float64 {
		sum := 0.0
		for c := range channels {
			sum += sample(f, c)
		}
		return sum / float64(channels)
	}
	n := int(int64(frames) * int64(toRate) / int64(rate))
	out := make([]byte, 0, n*toChannels*2)
	for i := range n {
		pos := float64(i) * float64(rate) / float64(toRate)
		f := int(pos)
		frac := pos - float64(f)
		for c := range toChannels {
			var a, b float64
			if channels == toChannels {
				a, b = sample(f, c), sample(f+1, c)
			} else {
				a, b = mono(f), mono(f+1)
			}
			v := a + (b-a)*frac
			out = binary.LittleEndian.AppendUint16(out, uint16(int16(min(max(v, -32768), 32767))))
		}
	}
	return out
}
