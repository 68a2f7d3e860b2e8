package llm

import "strings"

const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
	spaces     = " \t\r\n"
)

// ThinkClose is the tag that ends a model's reasoning in its content.
const ThinkClose = thinkClose

// SplitThink separates a leading <think>…</think> block, as reasoning
// models (DeepSeek R1, Qwen 3, …) put in their content, from the answer.
// Whitespace before the block and between it and the answer is dropped, and
// the reasoning is trimmed. Without a leading block, s is the answer as is;
// a block that is never closed is all reasoning. A bare "</think>" (the
// template opened the block) is left to the caller: CutOpenedThink.
func SplitThink(s string) (answer, reasoning string) {
	t := strings.TrimLeft(s, spaces)
	if !strings.HasPrefix(t, thinkOpen) {
		return s, ""
	}
	rest := t[len(thinkOpen):]
	i := strings.Index(rest, thinkClose)
	if i < 0 {
		return "", strings.TrimSpace(rest)
	}
	return strings.TrimLeft(rest[i+len(thinkClose):], spaces), strings.TrimSpace(rest[:i])
}

// CutOpenedThink splits content whose reasoning the chat template opened:
// the first "</think>" with no "<think>" before it ends the reasoning. ok
// is false when s has no such tag. The answer's leading whitespace is
// dropped and the reasoning trimmed.
func CutOpenedThink(s string) (answer, reasoning string, ok bool) {
	i := strings.Index(s, thinkClose)
	if i < 0 || strings.Contains(s[:i], thinkOpen) {
		return s, "", false
	}
	return strings.TrimLeft(s[i+len(thinkClose):], spaces), strings.TrimSpace(s[:i]), true
}

// thinkSplitter does SplitThink on streamed content: it holds content back
// until it knows whether the stream starts with a think block, and never
// lets think text out as content. The concatenated content it returns is
// SplitThink's answer; the concatenated reasoning, trimmed, its reasoning.
type thinkSplitter struct {
	state       int
	buf         string
	startedText bool // some reasoning text went out (leading space is dropped)
}

const (
	thinkUndecided = iota // nothing but whitespace or a prefix of <think> yet
	thinkInside           // inside the block
	thinkAfter            // past </think>, dropping whitespace
	thinkPlain            // answer text: pass through
)

// feed takes the next piece of content and returns what can be emitted now.
func (t *thinkSplitter) feed(s string) (content, reasoning string) {
	switch t.state {
	case thinkPlain:
		return s, ""
	case thinkUndecided:
		t.buf += s
		trimmed := strings.TrimLeft(t.buf, spaces)
		switch {
		case strings.HasPrefix(trimmed, thinkOpen):
			t.state = thinkInside
			t.buf = ""
			return t.feed(trimmed[len(thinkOpen):])
		case strings.HasPrefix(thinkOpen, trimmed):
			return "", "" // whitespace or a partial "<think>": wait
		}
		t.state = thinkPlain
		content, t.buf = t.buf, ""
		return content, ""
	case thinkInside:
		t.buf += s
		if !t.startedText {
			t.buf = strings.TrimLeft(t.buf, spaces)
		}
		if i := strings.Index(t.buf, thinkClose); i >= 0 {
			reasoning = t.buf[:i]
			rest := t.buf[i+len(thinkClose):]
			t.buf = ""
			t.state = thinkAfter
			content, _ = t.feed(rest)
			return content, reasoning
		}
		k := partialSuffix(t.buf, thinkClose)
		reasoning = t.buf[:len(t.buf)-k]
		t.buf = t.buf[len(t.buf)-k:]
		if reasoning != "" {
			t.startedText = true
		}
		return "", reasoning
	case thinkAfter:
		s = strings.TrimLeft(s, spaces)
		if s == "" {
			return "", ""
		}
		t.state = thinkPlain
		return s, ""
	}
	return "", ""
}

// flush returns what is still held back at the end of the stream.
func (t *thinkSplitter) flush() (content, reasoning string) {
	buf := t.buf
	t.buf = ""
	switch t.state {
	case thinkUndecided:
		return buf, ""
	case thinkInside:
		return "", buf
	}
	return "", ""
}

// partialSuffix is the length of the longest proper prefix of tag that s
// ends with.
func partialSuffix(s, tag string) int {
	for k := min(len(tag)-1, len(s)); k > 0; k-- {
		if strings.HasSuffix(s, tag[:k]) {
			return k
		}
	}
	return 0
}

// joinReasoning joins two pieces of reasoning with a blank line.
func joinReasoning(a, b string) string {
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n\n" + b
}
