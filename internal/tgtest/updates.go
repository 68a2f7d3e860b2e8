package tgtest

import (
	"encoding/json"
	"time"
)

// The updates below copy telegram-bot-api (github.com/tdlib/telegram-bot-api
// at commit 01a3679c0bbf9bbba03d1d3e20f621fa4becddcc), telegram-bot-api/
// Client.cpp.

// The placeholder users the Bot API puts in "from" of a message sent on
// behalf of a chat (Client.cpp, the messageSenderChat case near line
// 18146: group_anonymous_bot_user_id_ when sender_chat is the group itself,
// service_notifications_user_id_ for a linked channel's automatic forward,
// channel_bot_user_id_ for another channel); their ids and names as
// Telegram gives them.
var (
	GroupAnonymousBot = User{ID: 1087968824, IsBot: true, FirstName: "Group", Username: "GroupAnonymousBot"}
	ServiceUser       = User{ID: 777000, FirstName: "Telegram"}
	ChannelBot        = User{ID: 136817688, IsBot: true, FirstName: "Channel", Username: "Channel_Bot"}
)

// Update is a message of any kind as JSON fields (JsonMessage::store:
// from, author_signature, sender_chat, chat, date, edit_date,
// is_automatic_forward, text, new_chat_members, left_chat_member,
// new_chat_title, migrate_to_chat_id, migrate_from_chat_id,
// pinned_message …). message_id and date are set when missing.
type Update map[string]any

// PushUpdate queues an update whose field kind ("message",
// "edited_message") holds m, and returns m's message_id.
func (s *Server) PushUpdate(kind string, m Update) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	if _, ok := m["message_id"]; !ok {
		s.nextMsg++
		m["message_id"] = s.nextMsg
	}
	if _, ok := m["date"]; !ok {
		m["date"] = time.Now().Unix()
	}
	id := s.nextUpdate()
	b, _ := json.Marshal(map[string]any{"update_id": id, kind: m})
	s.updates = append(s.updates, update{id: id, raw: b})
	s.notify()
	n, _ := m["message_id"].(int)
	return n
}

// PushEdit queues the edited_message update of a message sent earlier
// (message_id id): the message anew with its new text and edit_date
// (Client.cpp get_update_type_name: "edited_message" for
// updateMessageEdited; JsonMessage: edit_date when the message was
// edited).
func (s *Server) PushEdit(id int, m Message) {
	m.MessageID = id
	b, _ := json.Marshal(m)
	var u Update
	_ = json.Unmarshal(b, &u)
	u["edit_date"] = time.Now().Unix()
	s.PushUpdate("edited_message", u)
}
