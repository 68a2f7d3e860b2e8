package onebot

import (
	"context"
	"time"

	"github.com/cyan-agent/cyan/bridge"
)

// notice handles a notice event: a recalled message (group_recall,
// friend_recall) and a poke of the bot (notify/poke with target_id the
// bot), as NapCat sends them (packages/napcat-onebot/event/notice/
// OB11GroupRecallNoticeEvent.ts, OB11FriendRecallNoticeEvent.ts,
// OB11PokeEvent.ts). Other notices are ignored.
func (a *Adapter) notice(ctx context.Context, ev *Event, self string) {
	n, ok := a.sink.(bridge.Noticer)
	if !ok {
		return
	}
	chat := bridge.Chat{Kind: bridge.Private, ID: string(ev.UserID)}
	if ev.GroupID != "" {
		chat = bridge.Chat{Kind: bridge.Group, ID: string(ev.GroupID)}
	}
	switch ev.NoticeType {
	case "group_recall", "friend_recall":
		if ev.MessageID != "" && chat.ID != "" {
			n.Recalled(ctx, chat, string(ev.MessageID))
		}
	case "notify":
		if ev.SubType != "poke" || self == "" || string(ev.TargetID) != self || string(ev.UserID) == self {
			return
		}
		from := string(ev.UserID)
		if ev.GroupID == "" && ev.SenderID != "" {
			from = string(ev.SenderID) // a friend poke: user_id is the chat
		}
		at := time.Unix(ev.Time, 0)
		if ev.Time <= 0 {
			at = a.o.Clock.Now()
		}
		if from == "" || from == self {
			return
		}
		if ev.GroupID == "" {
			chat.ID = from
		}
		n.Poked(ctx, chat, bridge.User{ID: from}, at)
	}
}
