package telegram

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/go-telegram/bot/models"

	"github.com/cyan-agent/cyan/bridge"
)

// fetcher downloads a file by its file_id, at most max bytes.
type fetcher func(ctx context.Context, fileID string, max int64) ([]byte, error)

// toMessage turns an update into the bridge's form: a message, or an
// edited message (Edited: its new text replaces the stored one). nil for
// updates that carry no chat message (channel posts, callbacks…) and for
// a service message of a kind not shown. A message sent on behalf of a
// chat (sender_chat: an anonymous admin, the group itself; a linked
// channel's automatic forward) is from that chat, by its title; a
// service message (members joined or left, a new title or photo, a pin,
// an upgrade to a supergroup) is a Notice.
func toMessage(u *models.Update, self bridge.User, fetch fetcher) *bridge.Message {
	if u == nil {
		return nil
	}
	m, edited := u.Message, false
	if m == nil && u.EditedMessage != nil {
		m, edited = u.EditedMessage, true
	}
	if m == nil {
		return nil
	}
	from, ok := senderOf(m)
	if !ok {
		return nil
	}
	out := &bridge.Message{ID: strconv.Itoa(m.ID), From: from, Time: time.Unix(int64(m.Date), 0), Edited: edited}
	if m.Date == 0 {
		out.Time = time.Time{}
	}
	chatID := strconv.FormatInt(m.Chat.ID, 10)
	switch m.Chat.Type {
	case models.ChatTypePrivate:
		out.Chat = bridge.Chat{Kind: bridge.Private, ID: chatID}
	case models.ChatTypeGroup, models.ChatTypeSupergroup:
		out.Chat = bridge.Chat{Kind: bridge.Group, ID: chatID}
		if m.IsTopicMessage && m.MessageThreadID != 0 {
			// a forum topic is a conversation of its own (the General topic
			// has no message_thread_id: it is the group)
			out.Chat.Thread = strconv.Itoa(m.MessageThreadID)
		}
	default:
		return nil
	}
	if parts := serviceParts(m, self); len(parts) > 0 {
		out.Notice, out.Edited, out.Parts = true, false, parts
		return out
	}
	if m.IsAutomaticForward {
		out.Parts = append(out.Parts, bridge.Part{Kind: bridge.PartOther, Text: "a post of the linked channel"})
	}
	if r := m.ReplyToMessage; r != nil && !(m.IsTopicMessage && r.ID == m.MessageThreadID) {
		// (a message of a topic that replies to nothing carries the
		// topic's first message as reply_to_message: not a reply)
		p := bridge.Part{Kind: bridge.PartReply, MessageID: strconv.Itoa(r.ID), ReplyText: firstNonEmpty(r.Text, r.Caption)}
		if rf, ok := senderOf(r); ok {
			p.ReplyFrom = rf.Name
			p.ToSelf = self.ID != "" && r.SenderChat == nil && rf.ID == self.ID
		}
		out.Parts = append(out.Parts, p)
	}
	text, entities := m.Text, m.Entities
	if text == "" {
		text, entities = m.Caption, m.CaptionEntities
	}
	parts, cmd := textParts(text, entities, self)
	out.Command = cmd
	switch {
	case len(m.Photo) > 0:
		best := m.Photo[len(m.Photo)-1]
		out.Parts = append(out.Parts, bridge.Part{Kind: bridge.PartImage, Media: media(best.FileID, best.FileUniqueID, int64(best.FileSize), 0, fetch)})
	case m.Sticker != nil:
		name := strings.TrimSpace(m.Sticker.Emoji + " " + m.Sticker.SetName)
		out.Parts = append(out.Parts, bridge.Part{Kind: bridge.PartSticker, Text: name})
	case m.Voice != nil:
		out.Parts = append(out.Parts, bridge.Part{Kind: bridge.PartVoice, Media: media(m.Voice.FileID, m.Voice.FileUniqueID, m.Voice.FileSize, time.Duration(m.Voice.Duration)*time.Second, nil)})
	case m.Audio != nil:
		out.Parts = append(out.Parts, bridge.Part{Kind: bridge.PartOther, Text: "audio"})
	case m.Video != nil:
		out.Parts = append(out.Parts, bridge.Part{Kind: bridge.PartOther, Text: "video"})
	case m.Document != nil:
		out.Parts = append(out.Parts, bridge.Part{Kind: bridge.PartOther, Text: fileText(m.Document.FileName, m.Document.FileSize)})
	}
	out.Parts = append(out.Parts, parts...)
	if len(out.Parts) == 0 {
		return nil // a kind of message (or service message) not shown
	}
	return out
}

// senderOf is who a message is from: its sender_chat when it was sent on
// behalf of a chat — an anonymous admin (the group itself; Telegram puts
// the placeholder user GroupAnonymousBot in from) or a channel (a linked
// channel's automatic forward, a channel's own post) — by the chat's
// title and the admin's signature if any; else from.
func senderOf(m *models.Message) (bridge.User, bool) {
	if c := m.SenderChat; c != nil {
		name := strings.TrimSpace(c.Title)
		if name == "" {
			name = strings.TrimSpace(c.FirstName + " " + c.LastName)
		}
		if name == "" && c.Username != "" {
			name = "@" + c.Username
		}
		if sig := strings.TrimSpace(m.AuthorSignature); sig != "" {
			name += " (" + sig + ")"
		}
		return bridge.User{ID: strconv.FormatInt(c.ID, 10), Name: name, Username: c.Username}, true
	}
	if m.From == nil {
		return bridge.User{}, false
	}
	return userOf(m.From), true
}

// serviceParts renders a service message (telegram-bot-api Client.cpp
// JsonMessage: new_chat_members, left_chat_member, new_chat_title,
// new_chat_photo, delete_chat_photo, group_chat_created,
// supergroup_chat_created, migrate_to_chat_id, migrate_from_chat_id,
// pinned_message), nil for an ordinary message.
func serviceParts(m *models.Message, self bridge.User) []bridge.Part {
	actor := bridge.Part{Kind: bridge.PartText, Text: "someone"}
	if u, ok := senderOf(m); ok {
		actor = who(u, self)
	}
	text := func(s string) bridge.Part { return bridge.Part{Kind: bridge.PartText, Text: s} }
	var out []bridge.Part
	switch {
	case len(m.NewChatMembers) > 0:
		for i, nu := range m.NewChatMembers {
			if i > 0 {
				out = append(out, text(", "))
			}
			out = append(out, who(userOf(&nu), self))
		}
		out = append(out, text(" joined the group"))
		if m.From != nil && (len(m.NewChatMembers) > 1 || m.NewChatMembers[0].ID != m.From.ID) {
			out = append(out, text(", added by "), actor)
		}
	case m.LeftChatMember != nil:
		out = append(out, who(userOf(m.LeftChatMember), self))
		if m.From != nil && m.From.ID != m.LeftChatMember.ID {
			out = append(out, text(" was removed from the group by "), actor)
		} else {
			out = append(out, text(" left the group"))
		}
	case m.NewChatTitle != "":
		out = append(out, actor, text(" renamed the group to «"+m.NewChatTitle+"»"))
	case len(m.NewChatPhoto) > 0:
		out = append(out, actor, text(" changed the group's photo"))
	case m.DeleteChatPhoto:
		out = append(out, actor, text(" removed the group's photo"))
	case m.GroupChatCreated || m.SupergroupChatCreated:
		out = append(out, actor, text(" created the group"))
	case m.MigrateToChatID != 0:
		out = append(out, text("the group was upgraded to a supergroup (its new id is "+strconv.FormatInt(m.MigrateToChatID, 10)+")"))
	case m.MigrateFromChatID != 0:
		out = append(out, text("this supergroup was upgraded from the group "+strconv.FormatInt(m.MigrateFromChatID, 10)))
	case m.PinnedMessage != nil:
		out = append(out, actor, text(" pinned a message"))
		if p := m.PinnedMessage.Message; p != nil {
			if t := firstNonEmpty(p.Text, p.Caption); t != "" {
				out = append(out, text(": «"+short(t, 80)+"»"))
			}
		}
	}
	return out
}

// who names a user in a service message: "you" for the bot.
func who(u bridge.User, self bridge.User) bridge.Part {
	if self.ID != "" && u.ID == self.ID {
		return bridge.Part{Kind: bridge.PartText, Text: "you"}
	}
	return bridge.Part{Kind: bridge.PartMention, UserID: u.ID, Text: firstNonEmpty(u.Name, u.Username)}
}

// fileText is a document as the model reads it: "file name (size)".
func fileText(name string, size int64) string {
	s := "file"
	if name = strings.TrimSpace(name); name != "" {
		s += " " + short(name, 120)
	}
	switch {
	case size >= 1<<20:
		s += fmt.Sprintf(" (%.1f MB)", float64(size)/(1<<20))
	case size >= 1<<10:
		s += fmt.Sprintf(" (%.0f KB)", float64(size)/(1<<10))
	case size > 0:
		s += fmt.Sprintf(" (%d bytes)", size)
	}
	return s
}

// short cuts s to n runes.
func short(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if rs := []rune(s); len(rs) > n {
		return string(rs[:n]) + "…"
	}
	return s
}

func media(fileID, unique string, size int64, d time.Duration, fetch fetcher) *bridge.Media {
	md := &bridge.Media{Name: unique, Size: size, Duration: d}
	if fetch != nil && fileID != "" {
		md.Fetch = func(ctx context.Context, max int64) ([]byte, error) { return fetch(ctx, fileID, max) }
	}
	return md
}

func userOf(u *models.User) bridge.User {
	name := strings.TrimSpace(u.FirstName + " " + u.LastName)
	return bridge.User{ID: strconv.FormatInt(u.ID, 10), Name: name, Username: u.Username, IsBot: u.IsBot}
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// textParts splits text at its mention entities (offsets and lengths count
// UTF-16 code units, as the Bot API says) and finds a leading /command for
// this bot. Entities out of range or overlapping are ignored.
func textParts(text string, entities []models.MessageEntity, self bridge.User) ([]bridge.Part, string) {
	if text == "" {
		return nil, ""
	}
	units := utf16.Encode([]rune(text))
	var parts []bridge.Part
	var cmd string
	at := 0
	emit := func(to int) {
		if to > at {
			parts = append(parts, bridge.Part{Kind: bridge.PartText, Text: string(utf16.Decode(units[at:to]))})
		}
	}
	for _, e := range entities {
		start, end := e.Offset, e.Offset+e.Length
		if e.Length <= 0 || start < at || end > len(units) || start < 0 {
			continue
		}
		word := string(utf16.Decode(units[start:end]))
		switch e.Type {
		case models.MessageEntityTypeMention: // "@username"
			emit(start)
			name := strings.TrimPrefix(word, "@")
			p := bridge.Part{Kind: bridge.PartMention, Text: name}
			if self.Username != "" && strings.EqualFold(name, self.Username) {
				p.UserID = self.ID
			}
			parts = append(parts, p)
			at = end
		case models.MessageEntityTypeTextMention:
			if e.User == nil {
				continue
			}
			emit(start)
			parts = append(parts, bridge.Part{Kind: bridge.PartMention, UserID: strconv.FormatInt(e.User.ID, 10), Text: word})
			at = end
		case models.MessageEntityTypeBotCommand:
			if start != 0 {
				continue
			}
			name, target, _ := strings.Cut(strings.TrimPrefix(word, "/"), "@")
			if target == "" || strings.EqualFold(target, self.Username) {
				cmd = name
			}
		}
	}
	emit(len(units))
	return parts, cmd
}

// render writes an outgoing message as text with text_mention entities
// (offsets in UTF-16 code units) and the message it replies to.
func render(m bridge.Outgoing) (string, []models.MessageEntity, int) {
	var b strings.Builder
	var ents []models.MessageEntity
	units := 0
	reply := 0
	for _, p := range m.Parts {
		switch p.Kind {
		case bridge.PartText:
			b.WriteString(p.Text)
			units += len(utf16.Encode([]rune(p.Text)))
		case bridge.PartMention:
			name := p.Text
			if name == "" {
				name = p.UserID
			}
			id, err := strconv.ParseInt(p.UserID, 10, 64)
			n := len(utf16.Encode([]rune(name)))
			if err == nil {
				ents = append(ents, models.MessageEntity{Type: models.MessageEntityTypeTextMention, Offset: units, Length: n, User: &models.User{ID: id}})
			}
			b.WriteString(name)
			units += n
		case bridge.PartReply:
			reply, _ = strconv.Atoi(p.MessageID)
		}
	}
	return b.String(), ents, reply
}
