package daemon

import (
	"reflect"
	"testing"
)

func TestEmotionWordsFromThePersona(t *testing.T) {
	got := emotionWords(map[string]any{"sad": []any{"唉", " ", 3, "sigh"}, "angry": "哼, baka ,", "happy": 5})
	want := map[string][]string{"sad": {"唉", "sigh"}, "angry": {"哼", "baka"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("emotionWords = %v, want %v", got, want)
	}
	if emotionWords("not a map") != nil || emotionWords(nil) != nil {
		t.Error("a variable that is no map gives words")
	}
}
