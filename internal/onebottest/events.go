package onebottest

import (
	"encoding/json"

	"strconv"
)

// The events and calls below copy NapCat (github.com/NapNeko/NapCatQQ at
// commit af07479351c5b974e72ae1c7183f2272e79ffc1c) unless said otherwise.

// SetOffline makes the account logged out (true) or back (false): the
// heartbeats then carry status.online false (event/meta/
// OB11HeartbeatEvent.ts: online is !!selfInfo.online), and get_status
// answers online false (action/system/GetStatus.ts). The connection
// stays up, as NapCat's does when QQ kicks the account.
func (f *Impl) SetOffline(off bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.offline = off
}

// BotOffline pushes the bot_offline notice NapCat sends when QQ kicks
// the account (index.ts, msgListener.onKickedOffLine → new
// BotOfflineEvent(core, kick.tipsTitle, kick.tipsDesc); event/notice/
// BotOfflineEvent.ts: notice_type bot_offline, user_id the account, tag,
// message) and marks it offline (SetOffline). Lagrange.OneBot sends the
// same fields (Core/Entity/Notify/OneBotBotOffline.cs: tag, message;
// Core/Notify/NotifyService.cs).
func (f *Impl) BotOffline(title, desc string) error {
	f.SetOffline(true)
	return f.event(map[string]any{"post_type": "notice", "notice_type": "bot_offline", "user_id": f.SelfID,
		"tag": title, "message": desc})
}

// GroupIncrease pushes OB11GroupIncreaseEvent (event/notice/
// OB11GroupIncreaseEvent.ts): group_id, user_id (who joined),
// operator_id, sub_type approve or invite.
func (f *Impl) GroupIncrease(groupID, userID, operatorID int64, subType string) error {
	return f.event(map[string]any{"post_type": "notice", "notice_type": "group_increase", "group_id": groupID,
		"user_id": userID, "operator_id": operatorID, "sub_type": subType})
}

// GroupDecrease pushes OB11GroupDecreaseEvent (event/notice/
// OB11GroupDecreaseEvent.ts): sub_type leave, kick, kick_me or disband.
func (f *Impl) GroupDecrease(groupID, userID, operatorID int64, subType string) error {
	return f.event(map[string]any{"post_type": "notice", "notice_type": "group_decrease", "group_id": groupID,
		"user_id": userID, "operator_id": operatorID, "sub_type": subType})
}

// GroupName pushes OB11GroupNameEvent (event/notice/OB11GroupNameEvent.ts):
// notice_type notify, sub_type group_name, name_new.
func (f *Impl) GroupName(groupID, userID int64, name string) error {
	return f.event(map[string]any{"post_type": "notice", "notice_type": "notify", "sub_type": "group_name",
		"group_id": groupID, "user_id": userID, "name_new": name})
}

// Seg values for the rich segments, as api/msg.ts's rawToOb11Converters
// write them. Their data may hold objects (a forward's content), so they
// are pushed with GroupSegs.

// JSONCard is arkElement's segment: {"type":"json","data":{"data":<the ark
// JSON as a string>}}.
func JSONCard(ark string) map[string]any {
	return map[string]any{"type": "json", "data": map[string]any{"data": ark}}
}

// Markdown is markdownElement's segment: {"type":"markdown","data":
// {"content":…}}.
func Markdown(content string) map[string]any {
	return map[string]any{"type": "markdown", "data": map[string]any{"content": content}}
}

// File is fileElement's segment: file (the name), file_id, file_size (a
// string, as NapCat passes element.fileSize through).
func File(name, id string, size int64) map[string]any {
	return map[string]any{"type": "file", "data": map[string]any{"file": name, "file_id": id, "file_size": strconv.FormatInt(size, 10)}}
}

// OnlineFile is the onlinefile segment (types/message.ts
// OB11MessageOnlineFileSchema; api/msg.ts): msgId, elementId, fileName,
// fileSize (a string), isDir.
func OnlineFile(name string, size int64, dir bool) map[string]any {
	return map[string]any{"type": "onlinefile", "data": map[string]any{"msgId": "7400000000000000001", "elementId": "1",
		"fileName": name, "fileSize": strconv.FormatInt(size, 10), "isDir": dir}}
}

// ForwardMsg is one message of a forward as NapCat gives it inside
// data.content and in get_forward_msg's messages: an OB11Message.
type ForwardMsg struct {
	UserID   int64
	Nickname string
	Segs     []any // segments: Seg or the maps above (a nested Forward)
}

func (m ForwardMsg) ob11() map[string]any {
	return map[string]any{"self_id": 0, "user_id": m.UserID, "time": 0, "message_id": 0, "message_type": "group",
		"sender":      map[string]any{"user_id": m.UserID, "nickname": m.Nickname, "card": ""},
		"raw_message": "", "font": 14, "sub_type": "normal", "message": m.Segs, "message_format": "array", "post_type": "message"}
}

// Forward is multiForwardMsgElement's segment: {"type":"forward","data":
// {"id":…}}, with content (the messages) when NapCat parses forwards
// (parseMultMsg), else only the id — then get_forward_msg reads them
// (SetForward).
func Forward(id string, content ...ForwardMsg) map[string]any {
	d := map[string]any{"id": id}
	if len(content) > 0 {
		msgs := make([]any, len(content))
		for i, m := range content {
			msgs[i] = m.ob11()
		}
		d["content"] = msgs
	}
	return map[string]any{"type": "forward", "data": d}
}

// SetForward makes get_forward_msg answer id with msgs (action/go-cqhttp/
// GetForwardMsg.ts: {"messages": [OB11Message…]}); an id not set fails as
// NapCat's does: retcode 1200, "消息已过期或者为内层消息，无法获取转发消息".
func (f *Impl) SetForward(id string, msgs ...ForwardMsg) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.forwards == nil {
		f.forwards = map[string][]ForwardMsg{}
	}
	f.forwards[id] = msgs
}

// GroupSegs pushes a group message event whose segments are given as
// JSON values (Seg, or the maps above), in the array format; it returns
// its message_id.
func (f *Impl) GroupSegs(groupID int64, s Sender, segs ...any) (int64, error) {
	f.mu.Lock()
	f.init()
	f.nextID++
	id := f.nextID
	f.mu.Unlock()
	return id, f.event(map[string]any{"post_type": "message", "message_type": "group", "sub_type": "normal",
		"message_id": id, "group_id": groupID, "user_id": s.UserID, "raw_message": "", "font": 0, "message": segs,
		"sender": map[string]any{"user_id": s.UserID, "nickname": s.Nickname, "card": s.Card, "role": "member"}})
}

// more answers the actions this file adds (get_status, get_forward_msg);
// ok is false for others. The caller holds f.mu.
func (f *Impl) more(action string, params map[string]json.RawMessage, echo json.RawMessage) (map[string]any, bool) {
	switch action {
	case "get_status":
		return napcatResponse(map[string]any{"online": !f.offline, "good": true, "stat": map[string]any{}}, "ok", 0, "", echo), true
	case "get_forward_msg":
		var id string
		for _, k := range []string{"message_id", "id"} {
			raw := params[k]
			if json.Unmarshal(raw, &id) == nil && id != "" {
				break
			}
			var n json.Number
			if json.Unmarshal(raw, &n) == nil && n != "" {
				id = n.String()
				break
			}
		}
		msgs, ok := f.forwards[id]
		if !ok {
			return napcatResponse(nil, "failed", 1200, "消息已过期或者为内层消息，无法获取转发消息", echo), true
		}
		out := make([]any, len(msgs))
		for i, m := range msgs {
			out[i] = m.ob11()
		}
		return napcatResponse(map[string]any{"messages": out}, "ok", 0, "", echo), true
	}
	return nil, false
}

// heartStatus is a heartbeat's status for the account's state. Lagrange's
// always says online (Lagrange.OneBot/Core/Network/Service/
// ReverseWSService.cs at commit e17fe35641d3a1dc9955566fa875232551224441:
// new OneBotStatus(true, true); Core/Entity/Meta/OneBotStatus.cs adds
// app_initialized, app_enabled, app_good).
func (f *Impl) heartStatus() map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.Lagrange {
		return map[string]any{"app_initialized": true, "app_enabled": true, "app_good": true, "online": true, "good": true}
	}
	return map[string]any{"online": !f.offline, "good": true}
}
