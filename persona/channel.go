package persona

import (
	"path/filepath"
	"strings"
	"unicode"
)

// PageChannel is the desktop page's channel with the built-in persona.
const PageChannel = "desktop"

// A character gets its own conversation on the page. The page's channel is
// resolved here, in one place, for the API (GET /api/v1/persona names it,
// the greeting and the history are asked for in it) and so for the page,
// which uses the channel the API names unless ?channel= says another:
//
//	the built-in persona            desktop
//	a persona folder …/Seraphina    desktop:Seraphina
//
// The part after "desktop:" is the persona's ID, the slug of its folder's
// name (Slug), so switching to another character opens that character's
// own conversation — its greeting on first open, its own history and
// context — and switching back finds the old one where it was: nothing is
// moved or deleted. Memory follows the channel (docs/memory.md): each
// character's conversation has its own event records; the owner's
// workspace and the theories are shared by every persona. A voice pattern that covers the page's channel covers every
// character's (PageChannels), so tts.channels: [desktop] voices them all.
//
// A folder chosen here is the folder's name, not the character's: a name
// can be edited in persona.md without losing the conversation.

// ID is the persona's ID: "" for the built-in persona, else the slug of its
// folder's name.
func (p *Persona) ID() string {
	if p == nil || p.Dir == "" {
		return ""
	}
	return Slug(filepath.Base(filepath.Clean(p.Dir)))
}

// PageChannelOf is the page's channel with persona p (nil: the built-in).
func PageChannelOf(p *Persona) string { return PageChannelFor(p.ID()) }

// PageChannelFor is the page's channel of the persona whose ID is id.
func PageChannelFor(id string) string {
	if id == "" {
		return PageChannel
	}
	return PageChannel + ":" + id
}

// PageChannels adds to channel patterns (tts.channels) the pattern of
// every character's page channel for each pattern that names the page's
// own: "desktop" brings "desktop:*". Patterns that already cover those
// channels are left as they are.
func PageChannels(patterns []string) []string {
	out := append([]string(nil), patterns...)
	for _, p := range patterns {
		if p == PageChannel {
			out = append(out, PageChannel+":*")
		}
	}
	return out
}

// Slug makes a folder name (and a persona ID) of a character's name: its
// letters (any script: 青蓝 stays 青蓝), digits, marks, '-', '_' and '.';
// controls and invisible format characters (bidi ones included) are
// dropped; every other run of characters (spaces, '!', '#', '/', …) becomes
// one '_', and none is kept at either end. "" becomes "persona".
func Slug(name string) string {
	var b strings.Builder
	gap := false
	for _, r := range name {
		switch {
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			// A control, bidi or other invisible format character is
			// dropped, not a gap: the name reads as it shows.
			continue
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r) || r == '-' || r == '_' || r == '.':
			if gap && b.Len() > 0 {
				b.WriteByte('_')
			}
			gap = false
			b.WriteRune(r)
		default:
			gap = true
		}
	}
	s := strings.Trim(b.String(), "._-")
	if s == "" {
		return "persona"
	}
	return s
}
