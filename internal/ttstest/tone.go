package ttstest

import (
	"encoding/binary"
	"math"
	"unicode/utf8"

	"github.com/cyan-agent/cyan/tts"
)

// Tone is 16-bit mono PCM at rate Hz: a 440 Hz tone, 60 ms per character
// of text (at least 100 ms), its loudness rising and falling like speech.
func Tone(text string, rate int) []byte {
	n := max(utf8.RuneCountInString(text)*60, 100) * rate / 1000
	pcm := make([]byte, 2*n)
	for i := range n {
		t := float64(i) / float64(rate)
		env := 0.5 + 0.5*math.Sin(2*math.Pi*4*t)
		v := int16(12000 * env * math.Sin(2*math.Pi*440*t))
		binary.LittleEndian.PutUint16(pcm[2*i:], uint16(v))
	}
	return pcm
}

// ToneWAV is Tone in a WAV file.
func ToneWAV(text string, rate int) []byte { return tts.PCMWAV(Tone(text, rate), rate, 1) }
