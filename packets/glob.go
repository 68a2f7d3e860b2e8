package packets

import (
	"errors"
	"strings"
)

// Match reports whether name matches the glob pattern. "*" matches any run
// of characters but "/", "**" any run including "/", "?" one character but
// "/"; everything else matches itself. Matching is linear in
// len(pattern)·len(name), whatever the input.
func Match(pattern, name string) bool { return match(pattern, name, false) }

// MatchText is Match for text that is not a path (a shell command): "*"
// matches "/" too.
func MatchText(pattern, name string) bool { return match(pattern, name, true) }

func match(pattern, name string, flat bool) bool {
	p, s := []rune(pattern), []rune(name)
	// cur[j]: pattern p[:i] matches s[:j].
	cur := make([]bool, len(s)+1)
	next := make([]bool, len(s)+1)
	cur[0] = true
	for i := 0; i < len(p); i++ {
		clear(next)
		switch {
		case p[i] == '*' && (flat || i+1 < len(p) && p[i+1] == '*'):
			any := false
			for j := 0; j <= len(s); j++ {
				any = any || cur[j]
				next[j] = any
			}
			if i+1 < len(p) && p[i+1] == '*' {
				i++ // the second star
			}
		case p[i] == '*':
			run := false
			for j := 0; j <= len(s); j++ {
				if j > 0 && s[j-1] == '/' {
					run = false
				}
				run = run || cur[j]
				next[j] = run
			}
		case p[i] == '?':
			for j := 1; j <= len(s); j++ {
				next[j] = cur[j-1] && (flat || s[j-1] != '/')
			}
		default:
			for j := 1; j <= len(s); j++ {
				next[j] = cur[j-1] && s[j-1] == p[i]
			}
		}
		cur, next = next, cur
	}
	return cur[len(s)]
}

// MaxPattern bounds a glob pattern's length.
const MaxPattern = 512

func checkGlob(p string) error {
	switch {
	case p == "":
		return errors.New("the pattern is empty")
	case len(p) > MaxPattern:
		return errors.New("the pattern is too long")
	case strings.ContainsAny(p, "\x00\n\r"):
		return errors.New("the pattern contains a NUL or line break")
	}
	return nil
}
