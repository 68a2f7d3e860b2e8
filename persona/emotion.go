package persona

import "strings"

// Emotions are the faces the page draws and the emotions a reply's
// segments carry (notation's %[emotion]): an avatar image named after one
// of them (avatar/happy.png) is shown for it, neutral.* for the rest.
var Emotions = []string{"neutral", "happy", "excited", "gentle", "sad", "ask", "surprised", "angry"}

// emotionTable maps the expression names of other apps to cyan's emotions.
// The names are SillyTavern's expressions extension's (DEFAULT_EXPRESSIONS
// in public/scripts/extensions/expressions/index.js: the 28 labels of its
// classifier), which its sprite packs and Chub expression packs are named
// by, and the usual names of V3 "emotion" assets and RisuAI emotion
// images. Where several map to one emotion, the first listed is its best
// picture (see EmotionRank). A name not in the table and not one of
// Emotions is no emotion of cyan's.
//
//	neutral    neutral, default, idle, calm, normal
//	happy      happy, joy, smile, amusement, approval, gratitude, optimism,
//	           pride, relief, admiration, laugh
//	excited    excited, excitement, desire
//	gentle     gentle, caring, love, shy, blush
//	sad        sad, sadness, grief, remorse, disappointment, embarrassment,
//	           cry
//	ask        ask, curiosity, confusion, thinking, question
//	surprised  surprised, surprise, realization, fear, nervousness, shock
//	angry      angry, anger, annoyance, disapproval, disgust, mad
var emotionTable = map[string][]string{
	"neutral":   {"neutral", "default", "idle", "calm", "normal"},
	"happy":     {"happy", "joy", "smile", "amusement", "approval", "gratitude", "optimism", "pride", "relief", "admiration", "laugh"},
	"excited":   {"excited", "excitement", "desire"},
	"gentle":    {"gentle", "caring", "love", "shy", "blush"},
	"sad":       {"sad", "sadness", "grief", "remorse", "disappointment", "embarrassment", "cry"},
	"ask":       {"ask", "curiosity", "confusion", "thinking", "question"},
	"surprised": {"surprised", "surprise", "realization", "fear", "nervousness", "shock"},
	"angry":     {"angry", "anger", "annoyance", "disapproval", "disgust", "mad"},
}

var emotionOf = func() map[string]string {
	m := map[string]string{}
	for e, names := range emotionTable {
		for _, n := range names {
			m[n] = e
		}
	}
	return m
}()

// EmotionOf maps an expression's name (any case, "joy", "Sadness") to
// cyan's emotion; ok is false for a name the table does not know.
func EmotionOf(name string) (emotion string, ok bool) {
	e, ok := emotionOf[strings.ToLower(strings.TrimSpace(name))]
	return e, ok
}

// EmotionRank is name's place among the names of its emotion: 0 for the
// emotion's own name, then the table's order. Of several pictures for one
// emotion the lowest rank is shown. -1 for a name the table does not know.
func EmotionRank(name string) int {
	n := strings.ToLower(strings.TrimSpace(name))
	e, ok := emotionOf[n]
	if !ok {
		return -1
	}
	for i, x := range emotionTable[e] {
		if x == n {
			return i
		}
	}
	return -1
}
