package telegram

import (
	"context"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/go-telegram/bot/models"

	"github.com/cyan-agent/cyan/bridge"
)

// fetcher downloads a file by its file_id, at most max bytes.
type fetcher func(ctx context.Context, fileID string, max int64) ([]byte, error)

// toMessage turns an update into the bridge's form (nil for updates that
// carry no chat message: edits, channel posts, callbacks…).
func toMessage(u *models.Update, self bridge.User, fetch fetcher) *bridge.Message {
	if u == nil || u.Message == nil {
		return nil
	}
	m := u.Message
	if m.From == nil {
		return nil
	}
	out := &bridge.Message{ID: strconv.Itoa(m.ID), From: userOf(m.From), Time: time.Unix(int64(m.Date), 0)}
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
	if r := m.ReplyToMessage; r != nil && !(m.IsTopicMessage && r.ID == m.MessageThreadID) {
		// (a message of a topic that replies to nothing carries the
		// topic's first message as reply_to_message: not a reply)
		p := bridge.Part{Kind: bridge.PartReply, MessageID: strconv.Itoa(r.ID), ReplyText: firstNonEmpty(r.Text, r.Caption)}
		if r.From != nil {
			p.ReplyFrom = userOf(r.From).Name
			p.ToSelf = self.ID != "" && strconv.FormatInt(r.From.ID, 10) == self.ID
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
		out.Parts = append(out.Parts, bridge.Part{Kind: bridge.PartOther, Text: "file " + m.Document.FileName})
	}
	out.Parts = append(out.Parts, parts...)
	return out
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
