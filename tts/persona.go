package tts

import "strings"

// VoiceSegmentsVar is the persona variable that chooses how replies are
// cut for the voice: "speak" runs the speak prompt script on each message
// (a model call, emotions by meaning); anything else, the rule splitter.
const VoiceSegmentsVar = "voice_segments"

// EmotionWordsVar is the persona variable with its emotion words for the
// voice's rule splitter: {emotion: [word, …]} (or a comma-separated string
// per emotion).
const EmotionWordsVar = "emotion_words"

// Scripted reports whether a persona's variables choose the speak script
// over the rule splitter (VoiceSegmentsVar).
func Scripted(vars map[string]any) bool { return vars[VoiceSegmentsVar] == "speak" }

// EmotionWords reads a persona's emotion_words variable (EmotionWordsVar);
// what is no map of words gives none.
func EmotionWords(v any) map[string][]string {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	out := map[string][]string{}
	for emo, ws := range m {
		switch ws := ws.(type) {
		case string:
			for _, w := range strings.Split(ws, ",") {
				if w = strings.TrimSpace(w); w != "" {
					out[emo] = append(out[emo], w)
				}
			}
		case []any:
			for _, w := range ws {
				if w, ok := w.(string); ok && strings.TrimSpace(w) != "" {
					out[emo] = append(out[emo], strings.TrimSpace(w))
				}
			}
		}
	}
	return out
}
