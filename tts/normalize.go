package tts

import (
	"strings"

	"github.com/cyan-agent/cyan/packets"
)

// Emotions are the emotions a segment may carry: the faces the page draws
// and the VRM body shows (neutral, happy, excited, gentle, sad, ask,
// surprised, angry) and Narration, a narrated action's. Every segment from
// outside the splitter — the speak tool's, a script's, the speech API's —
// is normalised once by NormalizeSegment, so the voice, the face and the
// VRM get the same one.
var Emotions = []string{DefaultEmotion, "happy", "excited", "gentle", "sad", "ask", "surprised", "angry", Narration}

// emotionSynonyms maps other names of an emotion (case aside) to one of
// Emotions.
var emotionSynonyms = func() map[string]string {
	m := map[string]string{}
	for emotion, words := range map[string][]string{
		DefaultEmotion: {"normal", "calm", "plain", "default", "none", "flat", "serious", "平静", "普通", "中性", "冷静", "平常", "通常", "落ち着き"},
		"happy":        {"joy", "joyful", "glad", "cheerful", "pleased", "delighted", "smile", "smiling", "laugh", "laughing", "content", "开心", "高兴", "快乐", "愉快", "喜悦", "嬉しい", "楽しい", "喜び"},
		"excited":      {"excitement", "thrilled", "energetic", "enthusiastic", "eager", "hyped", "兴奋", "激动", "兴高采烈", "興奮", "ワクワク", "わくわく"},
		"gentle":       {"soft", "tender", "warm", "kind", "caring", "soothing", "whisper", "whispering", "affectionate", "shy", "温柔", "柔和", "轻声", "体贴", "害羞", "優しい", "やさしい", "穏やか"},
		"sad":          {"sadness", "sorrow", "sorrowful", "unhappy", "upset", "crying", "cry", "depressed", "disappointed", "lonely", "melancholy", "难过", "伤心", "悲伤", "哭", "失落", "悲しい", "寂しい", "悲しみ"},
		"ask":          {"question", "questioning", "asking", "curious", "curiosity", "wondering", "confused", "疑问", "好奇", "疑惑", "質問", "疑問"},
		"surprised":    {"surprise", "shocked", "shock", "amazed", "astonished", "startled", "wow", "惊讶", "吃惊", "震惊", "惊喜", "驚き", "びっくり"},
		"angry":        {"anger", "mad", "furious", "annoyed", "irritated", "rage", "frustrated", "生气", "愤怒", "恼火", "怒", "怒り", "ムカつく"},
	} {
		for _, w := range words {
			m[w] = emotion
		}
	}
	for _, e := range Emotions {
		m[e] = e
	}
	return m
}()

// NormalizeEmotion maps an emotion as a model or a script writes it —
// any case, a synonym, an emoji or kaomoji ("SAD", "whisper", "😭") — to
// one of Emotions; an unknown one is DefaultEmotion.
func NormalizeEmotion(e string) string {
	k := strings.ToLower(strings.TrimSpace(e))
	if k == "" {
		return DefaultEmotion
	}
	if n, ok := emotionSynonyms[k]; ok {
		return n
	}
	for _, row := range emojiTable {
		for _, sign := range row.signs {
			if strings.Contains(e, sign) {
				return row.emotion
			}
		}
	}
	return DefaultEmotion
}

// languageAliases are the language names a model or the seed writes that
// are not BCP 47: the seed's own cn and jp, country codes, English and
// native names.
var languageAliases = map[string]string{
	"cn": "zh", "chs": "zh", "cht": "zh", "zh_cn": "zh", "mandarin": "zh", "chinese": "zh", "中文": "zh", "汉语": "zh", "漢語": "zh", "普通话": "zh", "cmn": "zh",
	"jp": "ja", "jpn": "ja", "japanese": "ja", "日本語": "ja", "日语": "ja", "日文": "ja",
	"kr": "ko", "kor": "ko", "korean": "ko", "한국어": "ko", "韩语": "ko",
	"eng": "en", "english": "en", "英语": "en", "英文": "en", "英語": "en",
	"cantonese": "yue", "粤语": "yue", "廣東話": "yue", "广东话": "yue",
	"fr": "fr", "french": "fr", "de": "de", "german": "de", "es": "es", "spanish": "es", "ru": "ru", "russian": "ru",
}

// NormalizeLanguage writes a segment's language as BCP 47 (zh, ja, en,
// ko, yue, zh-TW, en-US …): the seed's codes cn and jp and the other
// aliases above become their tags, a region keeps its capitals; "" stays
// "" (the text decides).
func NormalizeLanguage(l string) string {
	l = strings.TrimSpace(l)
	if l == "" {
		return ""
	}
	low := strings.ToLower(l)
	if tag, ok := languageAliases[low]; ok {
		return tag
	}
	base, region, ok := strings.Cut(strings.ReplaceAll(low, "_", "-"), "-")
	if tag, known := languageAliases[base]; known {
		base = tag
	}
	if !ok {
		return base
	}
	if len(region) == 2 {
		region = strings.ToUpper(region)
	} else if len(region) == 4 {
		region = strings.ToUpper(region[:1]) + region[1:]
	}
	return base + "-" + region
}

// NormalizeSegment is a segment from outside the splitter with its emotion
// and language normalised (NormalizeEmotion, NormalizeLanguage); a missing
// language is the text's.
func NormalizeSegment(s packets.Segment) packets.Segment {
	s.Emotion = NormalizeEmotion(s.Emotion)
	s.Language = NormalizeLanguage(s.Language)
	if s.Language == "" {
		s.Language = LanguageOf(s.Text)
	}
	return s
}
