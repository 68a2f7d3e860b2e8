package tts

import "testing"

func TestEmotionOf(t *testing.T) {
	persona := map[string][]string{"sad": {"唉"}, "angry": {"baka"}}
	tests := []struct {
		name, text, want, said string
	}{
		{"plain", "今天天气很好。", "neutral", "今天天气很好。"},
		{"a question", "你吃饭了吗？", "ask", ""},
		{"an exclamation", "Great news!", "excited", ""},
		{"surprise by punctuation", "真的吗？！", "surprised", ""},
		{"trailing ellipsis", "嗯……", "gentle", ""},
		{"a happy emoji beats the question mark", "要一起去吗？😊", "happy", ""},
		{"a sad emoji", "I missed it 😭", "sad", ""},
		{"an angry emoji", "不许这样💢", "angry", ""},
		{"a happy kaomoji is not read", "好呀 (^_^)", "happy", "好呀  "},
		{"a sad kaomoji", "又输了 T_T", "sad", "又输了  "},
		{"a bracketed face", "谢谢你 (｡•́︿•̀｡)", "neutral", "谢谢你  "},
		{"a surprised kaomoji", "Σ(ﾟДﾟ) 什么", "surprised", ""},
		{"a built-in word", "哈哈，你真逗。", "happy", ""},
		{"a japanese word", "やった、合格した！", "happy", ""},
		{"a latin word at a word's start", "Wow, that is big.", "surprised", ""},
		{"a latin word inside another is not it", "The shower is cold.", "neutral", ""},
		{"the persona's word", "唉，算了。", "sad", ""},
		{"the persona's latin word", "You BAKA.", "angry", ""},
		{"the persona's word beats punctuation", "唉？", "sad", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, said := EmotionOf(tt.text, persona, "")
			if got != tt.want {
				t.Errorf("EmotionOf(%q) = %q, want %q", tt.text, got, tt.want)
			}
			if tt.said != "" && said != tt.said {
				t.Errorf("EmotionOf(%q) leaves %q to say, want %q", tt.text, said, tt.said)
			}
		})
	}
	if got, _ := EmotionOf("plain.", nil, "gentle"); got != "gentle" {
		t.Errorf("the fallback: %q", got)
	}
}
