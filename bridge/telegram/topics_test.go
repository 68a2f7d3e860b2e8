package telegram

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/bridge"
	"github.com/cyan-agent/cyan/internal/tgtest"
)

func TestAForumTopicIsItsOwnChatAndRepliesGoThere(t *testing.T) {
	a, fake, s, stop := rig(t, "123:abc")
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()
	forum := tgtest.Chat{ID: -1002, Type: "supergroup", Title: "forum", IsForum: true}
	fake.AddTopic(forum.ID, 42)
	s.until(t, "connected", func() bool { return len(s.self) == 1 })
	// a topic message that replies to nothing carries the topic's first
	// message as reply_to_message
	root := &tgtest.Message{MessageID: 42, From: amy, Chat: forum, Text: "topic created"}
	fake.Push(tgtest.Message{From: amy, Chat: forum, Text: "@cyan_bot hi in the topic", MessageThreadID: 42, IsTopicMessage: true, ReplyTo: root,
		Entities: []tgtest.Entity{{Type: "mention", Offset: 0, Length: 9}}})
	fake.Push(tgtest.Message{From: amy, Chat: forum, Text: "in General"})
	s.until(t, "two messages", func() bool { return len(s.msgs) == 2 })
	topic, general := s.msgs[0], s.msgs[1]
	if want := (bridge.Chat{Kind: bridge.Group, ID: "-1002", Thread: "42"}); topic.Chat != want {
		t.Errorf("topic chat = %+v, want %+v", topic.Chat, want)
	}
	for _, p := range topic.Parts {
		if p.Kind == bridge.PartReply {
			t.Errorf("the topic's root message was taken as a reply: %+v", p)
		}
	}
	if general.Chat.Thread != "" {
		t.Errorf("a General message has thread %q", general.Chat.Thread)
	}
	if topic.Chat.Channel("tg") != "tg:group:-1002:42" {
		t.Errorf("channel %q", topic.Chat.Channel("tg"))
	}
	if _, err := a.Send(context.Background(), topic.Chat, bridge.Outgoing{Parts: []bridge.OutPart{{Kind: bridge.PartText, Text: "answer"}}}); err != nil {
		t.Fatal(err)
	}
	if err := a.Typing(context.Background(), topic.Chat); err != nil {
		t.Fatal(err)
	}
	for _, c := range fake.Calls("sendMessage", "sendChatAction") {
		if c.Params["message_thread_id"] != "42" {
			t.Errorf("%s without the topic: %v", c.Method, c.Params)
		}
	}
	// a topic that does not exist is refused as the Bot API does
	_, err := a.Send(context.Background(), bridge.Chat{Kind: bridge.Group, ID: "-1002", Thread: "9"}, bridge.Outgoing{Parts: []bridge.OutPart{{Kind: bridge.PartText, Text: "x"}}})
	if err == nil || !strings.Contains(err.Error(), "message thread not found") {
		t.Errorf("send to a missing topic: %v", err)
	}
}

func TestTooLongAndRateLimitedAreToldApart(t *testing.T) {
	a, fake, s, stop := rig(t, "123:abc")
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()
	s.until(t, "connected", func() bool { return len(s.self) == 1 })
	chat := bridge.Chat{Kind: bridge.Private, ID: "1"}
	long := bridge.Outgoing{Parts: []bridge.OutPart{{Kind: bridge.PartText, Text: strings.Repeat("a", tgtest.MaxText+1)}}}
	_, err := a.Send(context.Background(), chat, long)
	var se *bridge.SendError
	if !errors.As(err, &se) || !se.TooLong || se.Temporary {
		t.Errorf("a 4097-character message: %#v", err)
	}
	fake.FailSend(tgtest.Failure{Code: 429, RetryAfter: 7})
	_, err = a.Send(context.Background(), chat, bridge.Outgoing{Parts: []bridge.OutPart{{Kind: bridge.PartText, Text: "x"}}})
	if !errors.As(err, &se) || !se.Temporary || se.RetryAfter.Seconds() != 7 || se.TooLong {
		t.Errorf("a 429: %#v", err)
	}
	if l := a.Limit(); l.Max != 4096 || l.Units('😀') != 2 || l.Units('a') != 1 {
		t.Errorf("limit = %+v", l)
	}
}
