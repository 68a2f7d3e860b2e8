package llm

import (
	"strings"
	"testing"
)

func TestSplitThink(t *testing.T) {
	tests := []struct {
		name, in, answer, reasoning string
	}{
		{"none", "plain answer", "plain answer", ""},
		{"none keeps spaces", "  plain ", "  plain ", ""},
		{"block", "<think>\nhmm\n</think>\n\nyes", "yes", "hmm"},
		{"leading space", " \n<think>a</think>b", "b", "a"},
		{"unclosed", "<think>still thinking", "", "still thinking"},
		{"empty block", "<think></think>answer", "answer", ""},
		{"not leading", "answer <think>x</think>", "answer <think>x</think>", ""},
		{"partial tag", "<thin", "<thin", ""},
		{"only the block", "<think>x</think>", "", "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, r := SplitThink(tt.in)
			if a != tt.answer || r != tt.reasoning {
				t.Errorf("SplitThink(%q) = %q, %q; want %q, %q", tt.in, a, r, tt.answer, tt.reasoning)
			}
			for _, size := range []int{1, 2, 3, 7, 100} {
				content, reasoning := splitStreamed(tt.in, size)
				if content != tt.answer || strings.TrimSpace(reasoning) != tt.reasoning {
					t.Errorf("streamed in %d-byte pieces: %q, %q; want %q, %q", size, content, reasoning, tt.answer, tt.reasoning)
				}
			}
		})
	}
}

// splitStreamed feeds s to a thinkSplitter in pieces of size bytes.
func splitStreamed(s string, size int) (content, reasoning string) {
	var ts thinkSplitter
	var c, r strings.Builder
	for len(s) > 0 {
		n := min(size, len(s))
		cc, rr := ts.feed(s[:n])
		c.WriteString(cc)
		r.WriteString(rr)
		s = s[n:]
	}
	cc, rr := ts.flush()
	c.WriteString(cc)
	r.WriteString(rr)
	return c.String(), r.String()
}

// FuzzSplitThink checks SplitThink's promises and that the streaming
// splitter agrees with it however the content is cut.
func FuzzSplitThink(f *testing.F) {
	f.Add("<think>a</think>b", uint8(1))
	f.Add("  <think>\nreasoning\n</think>\n\nanswer", uint8(3))
	f.Add("<think>unclosed", uint8(2))
	f.Add("no block </think>", uint8(5))
	f.Fuzz(func(t *testing.T, s string, size uint8) {
		answer, reasoning := SplitThink(s)
		if !strings.Contains(s, thinkOpen) && (answer != s || reasoning != "") {
			t.Fatalf("SplitThink(%q) changed text without a think block", s)
		}
		if !strings.HasSuffix(s, answer) {
			t.Fatalf("answer %q is not a suffix of %q", answer, s)
		}
		if reasoning != "" && !strings.Contains(s, reasoning) {
			t.Fatalf("reasoning %q is not from %q", reasoning, s)
		}
		content, streamed := splitStreamed(s, int(size%16)+1)
		if content != answer || strings.TrimSpace(streamed) != reasoning {
			t.Fatalf("streamed %q, %q; SplitThink %q, %q", content, streamed, answer, reasoning)
		}
	})
}

// FuzzCutOpenedThink: a bare "</think>" splits reasoning from the answer;
// with a "<think>" before it, or none at all, the text is left alone.
func FuzzCutOpenedThink(f *testing.F) {
	f.Add("the user says hi\n</think>\n\nHi!")
	f.Add("<think>a</think>b")
	f.Add("no tags")
	f.Fuzz(func(t *testing.T, s string) {
		answer, reasoning, ok := CutOpenedThink(s)
		i := strings.Index(s, thinkClose)
		if ok != (i >= 0 && !strings.Contains(s[:i], thinkOpen)) {
			t.Fatalf("CutOpenedThink(%q) ok = %v", s, ok)
		}
		if !ok && (answer != s || reasoning != "") {
			t.Fatalf("CutOpenedThink(%q) changed text it did not cut", s)
		}
		if ok && (!strings.HasSuffix(s, answer) || !strings.Contains(s[:i], reasoning)) {
			t.Fatalf("CutOpenedThink(%q) = %q, %q", s, answer, reasoning)
		}
	})
}
