package onebot

import (
	"context"
	"strconv"
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
	case "group_ban":
		a.groupBan(ev, self)
		return
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

// groupBan handles a group_ban notice for the bot's own id: sub_type ban
// with duration in seconds (NapCat packages/napcat-onebot/event/notice/
// OB11GroupBanEvent.ts, LLOneBot src/onebot11/event/notice/
// OB11GroupBanEvent.ts; Lagrange.OneBot Core/Entity/Notify/
// OneBotGroupMute.cs and Core/Notify/NotifyService.cs, where a mute of the
// whole group has user_id 0 and duration -1), lift_ban when it ends. The
// bridge holds the group's answers meanwhile. A whole-group mute is not
// the bot's: admins (and the bot, when it is one) still speak, and a send
// refused for it is caught as muted when it comes.
func (a *Adapter) groupBan(ev *Event, self string) {
	ce, ok := a.sink.(bridge.ChatEvents)
	if !ok || self == "" || ev.GroupID == "" || string(ev.UserID) != self {
		return
	}
	chat := bridge.Chat{Kind: bridge.Group, ID: string(ev.GroupID)}
	switch ev.SubType {
	case "ban":
		var until time.Time
		if ev.Duration > 0 && ev.Duration <= maxMute {
			at := time.Unix(ev.Time, 0)
			if ev.Time <= 0 {
				at = a.o.Clock.Now()
			}
			until = at.Add(time.Duration(ev.Duration) * time.Second)
		}
		ce.Muted(chat, until)
	case "lift_ban":
		ce.Unmuted(chat)
	}
}

// maxMute is the longest mute QQ gives (30 days); a longer duration is
// read as unknown (held until lifted).
const maxMute = 30 * 24 * 3600

// seconds is a duration field in seconds, read from a number or a string
// of digits; anything else reads as 0 (unknown), never failing the event.
type seconds int64

// UnmarshalJSON implements json.Unmarshaler.
func (s *seconds) UnmarshalJSON(b []byte) error {
	var id ID
	*s = 0
	if id.UnmarshalJSON(b) == nil {
		n, _ := strconv.ParseInt(string(id), 10, 64)
		*s = seconds(n)
	}
	return nil
}
