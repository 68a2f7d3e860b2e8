package tgtest

import (
	"encoding/json"
	"net/http"
	"time"
)

// refuse is sendMessage's refusal for the chat itself, or 0; the caller
// holds s.mu.
//
//   - a group upgraded to a supergroup (Migrate): 400 "Bad Request: group
//     chat was upgraded to a supergroup chat" with
//     parameters.migrate_to_chat_id, as telegram-bot-api's
//     check_chat_access answers a deactivated group with
//     upgraded_to_supergroup_id (telegram-bot-api/Client.cpp, commit
//     01a3679c0bbf9bbba03d1d3e20f621fa4becddcc);
//   - a chat where the bot may not write (Restrict): 400 "Bad Request: not
//     enough rights to send text messages to the chat", TDLib's refusal as
//     fail_query_with_error passes a 400 on (same file and commit).
func (s *Server) refuse(chat int64) (int, string, map[string]any) {
	if to, ok := s.moved[chat]; ok {
		return http.StatusBadRequest, "Bad Request: group chat was upgraded to a supergroup chat", map[string]any{"migrate_to_chat_id": to}
	}
	if s.restricted[chat] {
		return http.StatusBadRequest, "Bad Request: not enough rights to send text messages to the chat", nil
	}
	return 0, "", nil
}

// post keeps a sent message as the chat shows it; the caller holds s.mu.
func (s *Server) post(m Message) {
	if s.posted == nil {
		s.posted = map[int64][]Message{}
	}
	s.posted[m.Chat.ID] = append(s.posted[m.Chat.ID], m)
}

// Posted are the texts the bot posted in a chat, once each.
func (s *Server) Posted(chat int64) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, m := range s.posted[chat] {
		if m.Voice != nil || m.Document != nil {
			continue // a file, not a text (Voices)
		}
		out = append(out, m.Text)
	}
	return out
}

// Migrate upgrades the group to the supergroup to: sends to the group's id
// are refused with migrate_to_chat_id from now, and the two service
// messages Telegram sends are queued — migrate_to_chat_id in the old group
// and migrate_from_chat_id in the new supergroup (telegram-bot-api
// Client.cpp JsonMessage: messageChatUpgradeTo, messageChatUpgradeFrom),
// from the admin who upgraded it. service false upgrades without them (an
// update lost while the bridge was away).
func (s *Server) Migrate(from, to int64, admin *User, service bool) {
	s.mu.Lock()
	s.init()
	if s.moved == nil {
		s.moved = map[int64]int64{}
	}
	s.moved[from] = to
	s.mu.Unlock()
	if !service {
		return
	}
	s.pushMessage(map[string]any{"from": admin, "chat": Chat{ID: from, Type: "group"}, "migrate_to_chat_id": to})
	s.pushMessage(map[string]any{"from": admin, "chat": Chat{ID: to, Type: "supergroup"}, "migrate_from_chat_id": from})
}

// pushMessage queues a message update given as its fields (message_id
// and date are added).
func (s *Server) pushMessage(m map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	s.nextMsg++
	m["message_id"], m["date"] = s.nextMsg, time.Now().Unix()
	id := s.nextUpdate()
	b, _ := json.Marshal(map[string]any{"update_id": id, "message": m})
	s.updates = append(s.updates, update{id: id, raw: b})
	s.notify()
}

// Restrict takes (or gives back) the bot's right to send in a chat.
func (s *Server) Restrict(chat int64, restricted bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.restricted == nil {
		s.restricted = map[int64]bool{}
	}
	s.restricted[chat] = restricted
}

// RestrictBot takes the bot's right to send in a group until until (zero:
// for ever; sends are refused as by Restrict) and queues the my_chat_member
// update Telegram sends for it: new_chat_member with status "restricted",
// can_send_messages false and until_date (telegram-bot-api Client.cpp
// JsonChatMember, commit 01a3679c0bbf9bbba03d1d3e20f621fa4becddcc).
// LiftBot gives it back with status "member".
func (s *Server) RestrictBot(chat Chat, admin *User, until time.Time) {
	s.Restrict(chat.ID, true)
	var u int64
	if !until.IsZero() {
		u = until.Unix()
	}
	s.pushMember(chat, admin, map[string]any{"status": "member", "user": s.Bot},
		map[string]any{"status": "restricted", "user": s.Bot, "is_member": true, "can_send_messages": false, "until_date": u})
}

// LiftBot gives the bot back its right to send and queues the update.
func (s *Server) LiftBot(chat Chat, admin *User) {
	s.Restrict(chat.ID, false)
	s.pushMember(chat, admin, map[string]any{"status": "restricted", "user": s.Bot, "is_member": true, "can_send_messages": false, "until_date": 0},
		map[string]any{"status": "member", "user": s.Bot})
}

func (s *Server) pushMember(chat Chat, admin *User, old, cur map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	id := s.nextUpdate()
	b, _ := json.Marshal(map[string]any{"update_id": id, "my_chat_member": map[string]any{"chat": chat, "from": admin,
		"date": time.Now().Unix(), "old_chat_member": old, "new_chat_member": cur}})
	s.updates = append(s.updates, update{id: id, raw: b})
	s.notify()
}
