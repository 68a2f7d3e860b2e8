package bridge

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cyan-agent/cyan/notation"
)

// The outgoing notation the model may write in a chat (rendered per
// platform as at / reply segments or Telegram entities):
//
//	@last_<name> …   at the start of a part: the part replies to <name>'s
//	                 last message in this chat
//	@<name>          mentions a speaker of this chat by the name they go by
//	@{<name>}        the same, for names with spaces
//
// A name nobody in the chat goes by stays plain text.
const lastPrefix = "@last_"

// parseOutgoing turns one part of the model's answer into an outgoing
// message for chat, resolving names through the roster.
func parseOutgoing(text string, c Chat, r *roster) Outgoing {
	var out Outgoing
	text = strings.TrimSpace(text)
	if rest, ok := strings.CutPrefix(text, lastPrefix); ok {
		name, after := leadingName(rest)
		if _, _, last, ok := r.lookup(c, name); ok && last != "" {
			out.Parts = append(out.Parts, OutPart{Kind: PartReply, MessageID: last})
			text = strings.TrimLeft(after, " \t:：,，")
		}
	}
	var buf strings.Builder
	flush := func() {
		if buf.Len() > 0 {
			out.Parts = append(out.Parts, OutPart{Kind: PartText, Text: buf.String()})
			buf.Reset()
		}
	}
	for i := 0; i < len(text); {
		if text[i] == '@' {
			if id, shown, n, ok := mentionAt(text[i+1:], c, r); ok {
				flush()
				out.Parts = append(out.Parts, OutPart{Kind: PartMention, UserID: id, Text: shown})
				i += 1 + n
				continue
			}
		}
		_, size := utf8.DecodeRuneInString(text[i:])
		buf.WriteString(text[i : i+size])
		i += size
	}
	flush()
	return out
}

// leadingName reads a name at the start of s: "{a name}" or a run of word
// runes.
func leadingName(s string) (name, rest string) {
	if strings.HasPrefix(s, "{") {
		if end := strings.IndexByte(s, '}'); end > 0 {
			return s[1:end], s[end+1:]
		}
	}
	end := 0
	for end < len(s) {
		r, size := utf8.DecodeRuneInString(s[end:])
		if !notation.WordRune(r) && r != '-' && r != '.' {
			break
		}
		end += size
	}
	return s[:end], s[end:]
}

// mentionAt resolves a mention after "@": "{name}", or the longest run of
// word runes that names a speaker (names may end early: "@alice，hi").
func mentionAt(s string, c Chat, r *roster) (id, shown string, n int, ok bool) {
	if strings.HasPrefix(s, "{") {
		end := strings.IndexByte(s, '}')
		if end <= 0 {
			return "", "", 0, false
		}
		id, shown, _, ok = r.lookup(c, s[1:end])
		return id, shown, end + 1, ok
	}
	name, _ := leadingName(s)
	for len(name) > 0 {
		if id, shown, _, ok = r.lookup(c, name); ok {
			return id, shown, len(name), true
		}
		_, size := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-size]
	}
	return "", "", 0, false
}

// renderInbound renders an incoming message as the text stored and shown
// to the model: text as said, mentions as "@name", a reply as
// "[reply to name: …]", images as their "%[…]" reference, stickers, voice
// and faces named. images maps a part index to its kept reference (or to
// why it was not kept).
func renderInbound(m *Message, c Chat, r *roster, selfName string, self User, images map[int]string) string {
	var b strings.Builder
	for i, p := range m.Parts {
		switch p.Kind {
		case PartText:
			b.WriteString(p.Text)
		case PartMention:
			name := p.Text
			switch {
			case p.UserID == "all":
				name = "all"
			case self.ID != "" && p.UserID == self.ID:
				name = selfName
			case name == "":
				name = r.nameOf(c, p.UserID)
			}
			if name == "" {
				name = p.UserID
			}
			b.WriteString("@" + strings.TrimPrefix(name, "@"))
		case PartReply:
			// The message answered, as the model reads a line of the chat
			// ("^name [time]: text", cut), so it knows what is answered.
			who := p.ReplyFrom
			if p.ToSelf {
				who = selfName
			}
			snippet := short(p.ReplyText, 80)
			switch {
			case who == "" && snippet == "":
				b.WriteString("[reply to an earlier message] ")
			case snippet == "":
				fmt.Fprintf(&b, "[reply to ^%s] ", who)
			case p.ReplyTime.IsZero():
				fmt.Fprintf(&b, "[reply to ^%s: %s] ", orWord(who, "someone"), snippet)
			default:
				fmt.Fprintf(&b, "[reply to ^%s [%s]: %s] ", orWord(who, "someone"), p.ReplyTime.Format(notation.TimeLayout), snippet)
			}
		case PartImage:
			spaced(&b, imageText(p, images[i]))
		case PartSticker:
			s := "[sticker"
			if p.Text != "" {
				s += " " + p.Text
			}
			spaced(&b, s+"]")
		case PartVoice:
			s := "[voice message"
			if p.Media != nil && p.Media.Duration > 0 {
				s += fmt.Sprintf(", %s", p.Media.Duration.Round(time.Second))
			}
			spaced(&b, s+"]")
		case PartFace:
			spaced(&b, "[face "+p.Text+"]")
		default:
			if p.Text != "" {
				spaced(&b, "["+p.Text+"]")
			}
		}
	}
	return strings.TrimSpace(b.String())
}

func imageText(p Part, kept string) string {
	if strings.HasPrefix(kept, "%[") {
		return kept
	}
	name := "an image"
	if p.Media != nil && p.Media.Name != "" {
		name = "image " + short(p.Media.Name, 40)
	}
	if kept != "" {
		return "[" + name + ": " + kept + "]"
	}
	return "[" + name + "]"
}

func spaced(b *strings.Builder, s string) {
	if b.Len() > 0 {
		last, _ := utf8.DecodeLastRuneInString(b.String())
		if last != ' ' && last != '\n' {
			b.WriteByte(' ')
		}
	}
	b.WriteString(s)
	b.WriteByte(' ')
}

func short(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	rs := []rune(s)
	return string(rs[:n]) + "…"
}

func orWord(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}
