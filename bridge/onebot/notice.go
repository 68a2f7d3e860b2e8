package onebot

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/bridge"
)

// notice handles a notice event: a recalled message (group_recall,
// friend_recall) and a poke of the bot (notify/poke with target_id the
// bot), as NapCat sends them (packages/napcat-onebot/event/notice/
// OB11GroupRecallNoticeEvent.ts, OB11FriendRecallNoticeEvent.ts,
// OB11PokeEvent.ts). Other notices are ignored.
//
// Beyond those (NapCat packages/napcat-onebot/event/notice/ at commit
// af07479): bot_offline (BotOfflineEvent: the account kicked offline; tag
// and message are the kick's title and text) tells the sink the account is
// offline; group_increase and group_decrease (OB11GroupIncreaseEvent,
// OB11GroupDecreaseEvent: user_id, operator_id, sub_type approve/invite,
// leave/kick/kick_me/disband) and notify/group_name (OB11GroupNameEvent:
// name_new) reach the chat as service messages, not as anyone's message; a
// group_recall names its sender and operator (RecalledBy), so an admin's
// recall of the bot's own message is applied.
func (a *Adapter) notice(ctx context.Context, ev *Event, self string) {
	if ev.NoticeType == "bot_offline" {
		if w, ok := a.sink.(bridge.AccountWatcher); ok {
			w.AccountOffline(offlineWhy(ev))
		}
		return
	}
	chat := bridge.Chat{Kind: bridge.Private, ID: string(ev.UserID)}
	if ev.GroupID != "" {
		chat = bridge.Chat{Kind: bridge.Group, ID: string(ev.GroupID)}
	}
	if m := serviceMessage(ev, chat, self); m != nil {
		a.sink.Inbound(ctx, m)
		return
	}
	n, ok := a.sink.(bridge.Noticer)
	if !ok {
		return
	}
	switch ev.NoticeType {
	case "group_ban":
		a.groupBan(ev, self)
		return
	case "group_recall":
		if r, ok := a.sink.(bridge.RecallNoticer); ok && ev.MessageID != "" && chat.ID != "" {
			r.RecalledBy(ctx, chat, string(ev.MessageID), bridge.User{ID: string(ev.UserID)}, bridge.User{ID: string(ev.OperatorID)})
			return
		}
		fallthrough
	case "friend_recall":
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

// offlineWhy is a bot_offline notice's reason: its title and text.
func offlineWhy(ev *Event) string {
	out := "kicked offline"
	for _, s := range []string{ev.Tag, ev.Why} {
		if s = strings.TrimSpace(s); s != "" && s != "BotOfflineEvent" {
			out += ": " + s
		}
	}
	return out
}

// serviceMessage is a group notice that the chat should read as a
// platform line: a member joined or left, the group was renamed. nil for
// other notices.
func serviceMessage(ev *Event, chat bridge.Chat, self string) *bridge.Message {
	if chat.Kind != bridge.Group {
		return nil
	}
	user, op := string(ev.UserID), string(ev.OperatorID)
	who := func(id string) bridge.Part {
		if id != "" && id == self {
			return bridge.Part{Kind: bridge.PartText, Text: "you"}
		}
		return bridge.Part{Kind: bridge.PartMention, UserID: id}
	}
	text := func(s string) bridge.Part { return bridge.Part{Kind: bridge.PartText, Text: s} }
	var parts []bridge.Part
	switch ev.NoticeType {
	case "group_increase":
		parts = []bridge.Part{who(user), text(" joined the group")}
		if ev.SubType == "invite" && op != "" && op != user && op != "0" {
			parts = append(parts, text(", invited by "), who(op))
		}
	case "group_decrease":
		switch ev.SubType {
		case "kick", "kick_me":
			parts = []bridge.Part{who(user), text(" was removed from the group")}
			if op != "" && op != "0" && op != user {
				parts = append(parts, text(" by "), who(op))
			}
		case "disband":
			parts = []bridge.Part{text("the group was disbanded")}
		default:
			parts = []bridge.Part{who(user), text(" left the group")}
		}
	case "notify":
		if ev.SubType != "group_name" || strings.TrimSpace(ev.NameNew) == "" {
			return nil
		}
		parts = []bridge.Part{who(user), text(" renamed the group to «" + strings.TrimSpace(ev.NameNew) + "»")}
	default:
		return nil
	}
	m := &bridge.Message{Chat: chat, From: bridge.User{ID: op}, Notice: true, Parts: parts}
	if ev.Time > 0 {
		m.Time = time.Unix(ev.Time, 0)
		m.ID = ev.NoticeType + "-" + user + "-" + strconv.FormatInt(ev.Time, 10)
	}
	return m
}
