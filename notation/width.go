package notation

// FoldWidth maps a full-width ASCII form (ＡＢＣ１２３, ！) to its ASCII
// character and the ideographic space to a space, so text typed in full
// width matches the same text in half width: recall's index terms and
// memory's fact comparison fold with it.
func FoldWidth(r rune) rune {
	switch {
	case r >= 0xFF01 && r <= 0xFF5E:
		return r - 0xFEE0
	case r == 0x3000:
		return ' '
	}
	return r
}
