package telegram

import (
	"encoding/json"
	"testing"

	"github.com/go-telegram/bot/models"

	"github.com/cyan-agent/cyan/bridge"
)

// FuzzUpdate: no update, however its entities are set, crashes the
// conversion; a message that converts has a chat and a sender.
func FuzzUpdate(f *testing.F) {
	f.Add([]byte(`{"update_id":1,"message":{"message_id":5,"from":{"id":1,"is_bot":false,"first_name":"Amy"},"chat":{"id":-100,"type":"supergroup"},"date":1,"text":"🙂 @cyan_bot hi","entities":[{"type":"mention","offset":3,"length":9}]}}`))
	f.Add([]byte(`{"update_id":2,"message":{"message_id":6,"from":{"id":1,"first_name":"A"},"chat":{"id":1,"type":"private"},"date":1,"text":"/start@cyan_bot","entities":[{"type":"bot_command","offset":0,"length":15}]}}`))
	f.Add([]byte(`{"update_id":3,"message":{"message_id":7,"from":{"id":1,"first_name":"A"},"chat":{"id":-5,"type":"group"},"date":1,"text":"x","entities":[{"type":"text_mention","offset":0,"length":99,"user":{"id":2}}],"reply_to_message":{"message_id":1,"chat":{"id":-5,"type":"group"},"date":1}}}`))
	f.Add([]byte(`{"update_id":4,"message":{"message_id":8,"from":{"id":1},"chat":{"id":-5,"type":"group"},"date":1,"photo":[{"file_id":"a","file_unique_id":"b","width":1,"height":1}],"caption":"c","caption_entities":[{"type":"mention","offset":-1,"length":2}]}}`))
	f.Add([]byte(`{"update_id":5,"edited_message":{"message_id":9}}`))
	f.Add([]byte(`{"update_id":6,"message":{"message_id":10,"message_thread_id":42,"is_topic_message":true,"from":{"id":1,"first_name":"A"},"chat":{"id":-1002,"type":"supergroup","is_forum":true},"date":1,"text":"in a topic","reply_to_message":{"message_id":42,"chat":{"id":-1002,"type":"supergroup"},"date":1}}}`))
	self := bridge.User{ID: "777", Username: "cyan_bot"}
	f.Fuzz(func(t *testing.T, b []byte) {
		var u models.Update
		if json.Unmarshal(b, &u) != nil {
			return
		}
		m := toMessage(&u, self, nil)
		if m == nil {
			return
		}
		if m.Chat.ID == "" || m.From.ID == "" {
			t.Fatalf("a message without chat or sender from %q", b)
		}
		if c, ok := bridge.ParseChannel("tg", m.Chat.Channel("tg")); !ok || c != m.Chat {
			t.Fatalf("the chat %+v does not survive its channel name %q", m.Chat, m.Chat.Channel("tg"))
		}
		_ = m.Text()
	})
}
