package bridge

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"
)

// Chat commands, the few every group bot has, are answered by the bridge
// at once — never by the model, never inside another person's turn — and
// are not kept in the conversation:
//
//	/help, /start  what the companion does here and how to address it
//	/reset         a new topic: the context starts after it (nothing is
//	               forgotten; the earlier talk stays in memory and recall)
//	/pause         (the owner) no unasked speech in this chat: no chime-in,
//	/resume        no proactive messages; /resume allows them again
//
// On Telegram a command is its bot_command entity, "/cmd@bot" only when
// the bot is this one; on QQ a message that starts with "/cmd" (after an
// @mention of the bot, if any). Other commands reach the model as text.
// manners.commands: false turns them off.

// Resetter is the optional part of an Agent that starts a new topic in a
// channel: what follows is the context, what came before stays stored
// and recallable. by names who asked.
type Resetter interface {
	Reset(ctx context.Context, channel string, kind Kind, by string) error
}

// ResetNote is the platform line /reset leaves: the context of a channel
// starts after the newest one (IsResetNote).
func ResetNote(by string) string {
	return resetNotePrefix + " (" + by + " used /reset; what was said before is remembered, not shown)"
}

const resetNotePrefix = "— a new topic begins here —"

// IsResetNote reports whether a stored platform line is a ResetNote.
func IsResetNote(text string) bool { return strings.HasPrefix(text, resetNotePrefix) }

// commands are the names answered; start is Telegram's first message.
var commands = map[string]bool{"help": true, "start": true, "reset": true, "pause": true, "resume": true}

// commandOf is the chat command a message gives, "" when none: the
// platform's (m.Command) or a "/word" at the start of its text, after a
// reply and an @mention of the bot.
func commandOf(m *Message, self User) string {
	if m.Command != "" {
		return strings.ToLower(m.Command)
	}
	var text strings.Builder
	for _, p := range m.Parts {
		switch p.Kind {
		case PartReply:
		case PartMention:
			if text.Len() > 0 || self.ID == "" || p.UserID != self.ID {
				return ""
			}
		case PartText:
			if text.Len() == 0 && strings.TrimSpace(p.Text) == "" {
				continue
			}
			text.WriteString(p.Text)
		default:
			return ""
		}
	}
	s := strings.TrimSpace(text.String())
	word, ok := strings.CutPrefix(s, "/")
	if !ok {
		return ""
	}
	if i := strings.IndexFunc(word, func(r rune) bool { return unicode.IsSpace(r) }); i >= 0 {
		word = word[:i]
	}
	word = strings.ToLower(word)
	if !commands[word] {
		return ""
	}
	return word
}

// answerCommand answers a chat command at once and reports whether the
// message was one (then it is neither kept nor answered by the model).
func (b *Bridge) answerCommand(ctx context.Context, m *Message) bool {
	if b.manners.Commands != nil && !*b.manners.Commands {
		return false
	}
	cmd := commandOf(m, b.self())
	if !commands[cmd] {
		return false
	}
	channel := m.Chat.Channel(b.name)
	speaker := b.speakerID(m.From.ID)
	name := displayName(m.From)
	var reply string
	switch cmd {
	case "help", "start":
		reply = b.helpText(m.Chat)
	case "reset":
		r, ok := b.agent.(Resetter)
		if !ok {
			reply = "A new topic cannot be started here."
			break
		}
		if err := r.Reset(context.WithoutCancel(ctx), channel, m.Chat.Kind, name); err != nil {
			b.log.Warn("/reset failed", "channel", channel, "err", err)
			reply = "I could not start a new topic just now; try again in a moment."
			break
		}
		reply = "New topic. I still remember what was said before; ask me about it any time."
	case "pause", "resume":
		if !b.agent.Owner(speaker) {
			reply = "Only my owner can /" + cmd + " me here."
			break
		}
		b.setPaused(m.Chat, cmd == "pause")
		if cmd == "pause" {
			reply = "Paused: I will not speak here unless someone addresses me. /resume to undo."
		} else {
			reply = "Resumed: I may speak here unasked again."
		}
	}
	b.log.Info("chat command answered", "channel", channel, "command", cmd, "speaker", speaker)
	out := Outgoing{Parts: []OutPart{{Kind: PartText, Text: reply}}}
	if m.Chat.Kind == Group && m.ID != "" {
		out.Parts = append([]OutPart{{Kind: PartReply, MessageID: m.ID}}, out.Parts...)
	}
	b.goSafe("command reply", func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if err := b.waitOnline(sctx); err != nil {
			b.log.Warn("the answer to a chat command was not sent: not connected", "channel", channel, "command", cmd)
			return
		}
		id, err := b.adapter.Send(sctx, m.Chat, out)
		if err != nil {
			b.log.Warn("the answer to a chat command was not sent", "channel", channel, "command", cmd, "err", err)
			return
		}
		b.markOwn(m.Chat, id)
	})
	return true
}

// helpText says what the companion does in the chat.
func (b *Bridge) helpText(c Chat) string {
	name := orWord(b.agentNm(), orWord(b.self().Name, "I"))
	var s strings.Builder
	if c.Kind == Private {
		fmt.Fprintf(&s, "%s here. Write to me and I answer; I can talk, remember what we said, look things up and keep track of plans.", name)
	} else {
		fmt.Fprintf(&s, "%s here. I answer when you @mention me, reply to one of my messages", name)
		if names := b.names(); len(names) > 0 {
			fmt.Fprintf(&s, " or say %s", strings.Join(quoted(names), " or "))
		}
		s.WriteString("; a burst of messages gets one answer.")
		if b.paused.has(c) {
			s.WriteString(" I am paused here: I speak only when addressed.")
		}
	}
	s.WriteString("\nCommands: /help — this; /reset — start a new topic (nothing is forgotten); /pause, /resume — my owner stops or allows my speaking unasked here.")
	return s.String()
}

func quoted(ss []string) []string {
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, "“"+s+"”")
		}
	}
	return out
}

// pausedChats are the chats where the owner paused unasked speech.
type pausedChats struct {
	mu sync.Mutex
	m  map[Chat]bool
}

func (p *pausedChats) set(c Chat, on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[Chat]bool{}
	}
	if on {
		p.m[c] = true
	} else {
		delete(p.m, c)
	}
}

func (p *pausedChats) has(c Chat) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.m[c]
}

// Paused reports whether the owner paused unasked speech in a channel of
// this bridge (/pause): no chime-in, and the daemon holds back proactive
// turns there.
func (b *Bridge) Paused(channel string) bool {
	c, ok := ParseChannel(b.name, channel)
	return ok && b.paused.has(c)
}
