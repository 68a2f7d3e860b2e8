package tts

import (
	"maps"
	"slices"
	"strings"
	"unicode"
)

// The emotion of a sentence cut by the rules (no speak call, no model
// call) is decided by the first of these that matches it; the names are
// the faces the page draws (neutral, happy, excited, gentle, sad, ask,
// surprised, angry):
//
//  1. an emoji or kaomoji in it:
//     happy      😊 😄 😁 😀 😃 🙂 ☺ 😍 🥰 😘 ❤ 💕 ♥ ✨ 🎉 ^_^ ^^ ^▽^ ≧▽≦ ^o^ ^ω^ :) :D
//     excited    🤩 🥳 😆 🙌 ✧
//     sad        😢 😭 😞 😔 😟 🥺 💔 T_T QAQ QwQ ;_; ╥﹏╥ :(
//     angry      😠 😡 🤬 💢 ╬ ｀Д´ `Д´ >:(
//     surprised  😲 😮 😯 😱 🙀 O_O o_O ﾟДﾟ Σ(
//     gentle     🤗 😌 🥹 ᵕ
//  2. one of the persona's emotion words (its emotion_words variable:
//     {emotion: [word, …]}), then one of the built-in words:
//     happy      哈哈 嘿嘿 太好了 好耶 开心 やった 嬉しい 楽しい haha hehe yay hooray
//     sad        呜呜 难过 伤心 可惜 悲しい 寂しい sadly unfortunately
//     angry      哼 可恶 生气 ムカつく damn
//     surprised  哇 竟然 えっ まさか wow whoa
//     gentle     没关系 辛苦了 大丈夫 don't worry take care
//     (Latin words match at a word's start, case aside; others anywhere);
//  3. its closing punctuation: ?! or !? surprised, ? ask, ! excited,
//     … or ... gentle;
//  4. otherwise Splitter.Emotion (DefaultEmotion when empty).
//
// Kaomoji are taken out of the text the voice reads.
var (
	emojiTable = []struct {
		emotion string
		signs   []string
	}{
		{"happy", []string{"😊", "😄", "😁", "😀", "😃", "🙂", "☺", "😍", "🥰", "😘", "❤", "💕", "♥", "✨", "🎉", "^_^", "^^", "^▽^", "≧▽≦", "^o^", "^ω^", ":)", ":D"}},
		{"excited", []string{"🤩", "🥳", "😆", "🙌", "✧"}},
		{"sad", []string{"😢", "😭", "😞", "😔", "😟", "🥺", "💔", "T_T", "QAQ", "QwQ", ";_;", "╥﹏╥", ":("}},
		{"angry", []string{"😠", "😡", "🤬", "💢", "╬", "｀Д´", "`Д´", ">:("}},
		{"surprised", []string{"😲", "😮", "😯", "😱", "🙀", "O_O", "o_O", "ﾟДﾟ", "Σ("}},
		{"gentle", []string{"🤗", "😌", "🥹", "ᵕ"}},
	}
	wordTable = []struct {
		emotion string
		words   []string
	}{
		{"happy", []string{"哈哈", "嘿嘿", "太好了", "好耶", "开心", "やった", "嬉しい", "楽しい", "haha", "hehe", "yay", "hooray"}},
		{"sad", []string{"呜呜", "难过", "伤心", "可惜", "悲しい", "寂しい", "sadly", "unfortunately"}},
		{"angry", []string{"哼", "可恶", "生气", "ムカつく", "damn"}},
		{"surprised", []string{"哇", "竟然", "えっ", "まさか", "wow", "whoa"}},
		{"gentle", []string{"没关系", "辛苦了", "大丈夫", "don't worry", "take care"}},
	}
	// kaomojiRunes are the characters a kaomoji is made of, besides the
	// signs above: a bracketed run of them is taken out of the text.
	kaomojiRunes = "^_▽≧≦ωoOДﾟ´｀`;╥﹏╬Σ•̀́ㅂو✧ᵕ｡*＊・ー−-=~◕‿◡><≖"
)

// EmotionOf decides a sentence's emotion by the rules in the table above,
// with the persona's words (nil: none) and the fallback emotion def; it
// returns the sentence without its kaomoji.
func EmotionOf(sentence string, words map[string][]string, def string) (string, string) {
	emotion := ""
	orig := sentence
	sentence = dropKaomoji(sentence)
	for _, row := range emojiTable {
		for _, sign := range row.signs {
			if !strings.Contains(orig, sign) {
				continue
			}
			if emotion == "" {
				emotion = row.emotion
			}
			if !isEmoji(sign) {
				sentence = strings.ReplaceAll(sentence, sign, " ")
			}
		}
	}
	if emotion != "" {
		return emotion, sentence
	}
	lower := strings.ToLower(sentence)
	for _, emo := range sortedKeys(words) {
		for _, w := range words[emo] {
			if hasWord(lower, strings.ToLower(w)) {
				return emo, sentence
			}
		}
	}
	for _, row := range wordTable {
		for _, w := range row.words {
			if hasWord(lower, w) {
				return row.emotion, sentence
			}
		}
	}
	end := strings.TrimRightFunc(sentence, func(r rune) bool { return unicode.IsSpace(r) || isCloser(r) })
	switch {
	case hasSuffixAny(end, "?!", "!?", "？！", "！？", "?！", "？!"):
		return "surprised", sentence
	case hasSuffixAny(end, "?", "？"):
		return "ask", sentence
	case hasSuffixAny(end, "!", "！"):
		return "excited", sentence
	case hasSuffixAny(end, "…", "..."):
		return "gentle", sentence
	}
	if def == "" {
		def = DefaultEmotion
	}
	return def, sentence
}

func isEmoji(s string) bool {
	for _, r := range s {
		return r > 0x2000 && (unicode.Is(unicode.So, r) || r >= 0x1F000)
	}
	return false
}

// dropKaomoji removes a bracketed face such as (｡•́︿•̀｡) or (*´▽`*): a
// bracket pair around no letters of a language and at least one kaomoji
// character.
func dropKaomoji(s string) string {
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		if rs[i] != '(' && rs[i] != '（' {
			continue
		}
		face := false
		for j := i + 1; j < len(rs) && j-i <= 20; j++ {
			r := rs[j]
			if r == ')' || r == '）' {
				if face {
					rs = append(rs[:i], append([]rune{' '}, rs[j+1:]...)...)
				}
				break
			}
			if strings.ContainsRune(kaomojiRunes, r) || unicode.Is(unicode.Mn, r) {
				face = true
				continue
			}
			if unicode.IsLetter(r) && r != 'o' && r != 'O' && r != 'Д' || unicode.IsDigit(r) {
				break
			}
		}
	}
	return string(rs)
}

// hasWord: w is in s, at a word's start when w starts with a Latin letter.
func hasWord(s, w string) bool {
	if w == "" {
		return false
	}
	latin := w[0] < 0x80
	for from := 0; ; {
		i := strings.Index(s[from:], w)
		if i < 0 {
			return false
		}
		i += from
		if !latin || i == 0 || !isWordRune(lastRune(s[:i])) {
			return true
		}
		from = i + len(w)
	}
}

func isWordRune(r rune) bool { return r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r)) }

func lastRune(s string) rune {
	r := []rune(s)
	return r[len(r)-1]
}

func hasSuffixAny(s string, ends ...string) bool {
	for _, e := range ends {
		if strings.HasSuffix(s, e) {
			return true
		}
	}
	return false
}

func sortedKeys(m map[string][]string) []string { return slices.Sorted(maps.Keys(m)) }
