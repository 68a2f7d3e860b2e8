package packets

import "encoding/json"

// Segment is one piece of speech: what to say, in which language, with
// which emotion (SPEC §5's {emotion, language, text}). It is the one
// segment type: the speak tool answers with it, the router's speech
// packets carry it, the voice (package tts) speaks it.
type Segment struct {
	Emotion  string `json:"emotion"`
	Language string `json:"language"`
	Text     string `json:"text"`
}

// ParseSpeech reads a speak result ({"speech": [segment, …]}), and whether
// it holds at least one segment.
func ParseSpeech(text string) ([]Segment, bool) {
	var out struct {
		Speech []Segment `json:"speech"`
	}
	if json.Unmarshal([]byte(text), &out) != nil || len(out.Speech) == 0 {
		return nil, false
	}
	return out.Speech, true
}

// SpeechKey is the key of a speak result's speech (the message's id plus
// "/speech"): the router's speech packet and the voice use it.
func SpeechKey(messageID string) string { return messageID + "/speech" }
