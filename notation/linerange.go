package notation

import (
	"regexp"
	"strconv"
)

// lineRange is a file or theory reference's line range as the notation
// writes it: "Line n ~ Line m" (any case of the L, a "～" or "-" for "~").
var lineRange = regexp.MustCompile(`^[Ll]ine\s*(\d{1,9})\s*[~～-]\s*[Ll]ine\s*(\d{1,9})$`)

// LineRange reads "Line n ~ Line m" (the whole of s, spaces trimmed by the
// caller); ok is false when s is not one. from and to are as written: the
// caller checks that 1 ≤ from ≤ to.
func LineRange(s string) (from, to int, ok bool) {
	m := lineRange.FindStringSubmatch(s)
	if m == nil {
		return 0, 0, false
	}
	from, _ = strconv.Atoi(m[1])
	to, _ = strconv.Atoi(m[2])
	return from, to, true
}
