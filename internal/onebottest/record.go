package onebottest

import (
	"bytes"
	"encoding/base64"
	"strings"
)

// VoiceRecord is a voice message (a record segment) the bot sent.
type VoiceRecord struct {
	Data   []byte // the file, decoded
	Format string // "wav", "mp3", "silk" or "amr"
}

// recordAudio reads a record segment's file as the implementations take
// it and names its format; false when it is not inline ("base64://"), or
// not a format all three turn into a QQ voice. Lagrange.OneBot is the
// strictest: RecordSegment.Build decodes the file (CommonResolver) and
// ConvertFormat detects it (AudioHelper.DetectAudio): AMR and SILK v3
// (with or without Tencent's 0x02 lead byte) go as they are, MP3 and WAV
// are decoded and encoded to SILK, and anything else (an OGG, say) throws
// "Encode failed", which OperationService answers as retcode 200
// "failed" (LagrangeDev/Lagrange.Core Lagrange.OneBot/Message/Entity/
// RecordSegment.cs, commit 11f3995f7f335d646b5ae0ec7f5b31ecda49dfff).
// NapCat and LLOneBot pass any other format through their ffmpeg to
// SILK, so these four reach a voice on all three; the fake refuses the
// rest with Lagrange's answer, for every flavour.
func recordAudio(file string) (VoiceRecord, bool) {
	enc, ok := strings.CutPrefix(file, "base64://")
	if !ok {
		return VoiceRecord{}, false
	}
	b, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return VoiceRecord{}, false
	}
	f := audioFormat(b)
	return VoiceRecord{Data: b, Format: f}, f != ""
}

// audioFormat names the format by its header, as Lagrange's
// AudioHelper.DetectAudio does; "" when none of the four.
func audioFormat(b []byte) string {
	switch {
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WAVE":
		return "wav"
	case bytes.HasPrefix(b, []byte("ID3")), len(b) >= 2 && b[0] == 0xFF && b[1]&0xE0 == 0xE0:
		return "mp3"
	case bytes.HasPrefix(b, []byte("#!SILK_V3")), bytes.HasPrefix(b, []byte("\x02#!SILK_V3")):
		return "silk"
	case bytes.HasPrefix(b, []byte("#!AMR")):
		return "amr"
	}
	return ""
}

// Records are the voice messages the bot sent in a chat ("group" or
// "private" and its id), in order.
func (f *Impl) Records(kind string, id int64) []VoiceRecord {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []VoiceRecord
	for _, m := range f.history[chatKey(kind, id, id)] {
		if m.UserID != f.SelfID {
			continue
		}
		for _, s := range m.Segs {
			if s.Type == "record" {
				if r, ok := recordAudio(s.Data["file"]); ok {
					out = append(out, r)
				}
			}
		}
	}
	return out
}
