package tts

import (
	"reflect"
	"testing"
)

func TestEmotionWordsFromThePersona(t *testing.T) {
	got := EmotionWords(map[string]any{"sad": []any{"唉", " ", 3, "sigh"}, "angry": "哼, baka ,", "happy": 5})
	want := map[string][]string{"sad": {"唉", "sigh"}, "angry": {"哼", "baka"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("EmotionWords = %v, want %v", got, want)
	}
	if EmotionWords("not a map") != nil || EmotionWords(nil) != nil {
		t.Error("a variable that is no map gives words")
	}
}

func TestScriptedByThePersonasVariable(t *testing.T) {
	if !Scripted(map[string]any{VoiceSegmentsVar: "speak"}) || Scripted(map[string]any{VoiceSegmentsVar: "rules"}) || Scripted(nil) {
		t.Error("only voice_segments: speak chooses the speak script")
	}
}
