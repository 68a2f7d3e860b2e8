package notation

import "testing"

func TestFoldWidth(t *testing.T) {
	for _, c := range []struct{ in, want rune }{
		{'Ａ', 'A'}, {'ｚ', 'z'}, {'４', '4'}, {'！', '!'}, {'～', '~'}, // the block's ends
		{'\u3000', ' '},
		{'A', 'A'}, {'猫', '猫'}, {'\uFF00', '\uFF00'}, {'\uFF5F', '\uFF5F'}, {'ｱ', 'ｱ'}, // outside it: kept
	} {
		if got := FoldWidth(c.in); got != c.want {
			t.Errorf("FoldWidth(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
