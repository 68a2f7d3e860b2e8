package onebottest

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// histMsg is a message of a chat's history: what was pushed and what the
// bot sent.
type histMsg struct {
	ID     int64
	UserID int64
	Time   int64
	Segs   []Seg
	Name   string
}

// chatKey names a chat's history: "group:<id>" or "private:<user id>".
func chatKey(kind string, groupID, userID int64) string {
	if kind == "group" {
		return "group:" + strconv.FormatInt(groupID, 10)
	}
	return "private:" + strconv.FormatInt(userID, 10)
}

// remember adds m to its chat's history; the caller holds f.mu.
func (f *Impl) remember(kind string, groupID, userID int64, m histMsg) {
	if f.history == nil {
		f.history = map[string][]histMsg{}
	}
	k := chatKey(kind, groupID, userID)
	f.history[k] = append(f.history[k], m)
}

// known reports whether a message id is in any chat's history; the
// caller holds f.mu.
func (f *Impl) known(id int64) bool {
	for _, h := range f.history {
		for _, m := range h {
			if m.ID == id {
				return true
			}
		}
	}
	return false
}

func paramInt(p map[string]json.RawMessage, k string) int64 {
	var n int64
	if json.Unmarshal(p[k], &n) == nil {
		return n
	}
	var s string
	if json.Unmarshal(p[k], &s) == nil {
		n, _ = strconv.ParseInt(s, 10, 64)
	}
	return n
}

// send answers send_group_msg / send_private_msg / send_msg; the caller
// holds f.mu. It returns the answer and how long it waits before giving
// it:
//
//   - Lagrange.OneBot refuses a reply to a message it never stored with
//     retcode 200 "failed": ReplySegment.Build looks the message up with
//     First(), which throws, and OperationService.HandleOperation answers
//     any exception so (LagrangeDev/Lagrange.Core
//     Lagrange.OneBot/Message/Entity/ReplySegment.cs and
//     Lagrange.OneBot/Core/Operation/OperationService.cs, commit
//     e17fe35641d3a1dc9955566fa875232551224441). Nothing is posted.
//   - in a group where the bot is muted (Mute), QQ never confirms the
//     message: NapCat's NTQQMsgApi.sendMsg waits its timeout (10 s,
//     packages/napcat-core/apis/msg.ts and the checker of
//     packages/napcat-core/helper/event.ts callNormalEventV2, commit
//     af07479351c5b974e72ae1c7183f2272e79ffc1c) and the action answers
//     retcode 1200 "Timeout: NTEvent serviceAndMethod:NodeIKernelMsgService/
//     sendMsg ListenerName:NodeIKernelMsgListener/onMsgInfoListUpdate
//     EventRet: …" (action/OneBotAction.ts); LLOneBot's invoke rejects
//     with "invoke timeout, nodeIKernelMsgService/sendMsg, …" and its
//     action answers 1200 (LLOneBot/LLOneBot src/ntqqapi/ntcall.ts and
//     src/onebot11/action/BaseAction.ts, commit
//     c9bd964df7b9c550b2b94031f65b3207b5c241dd). Nothing is posted.
//     Lagrange.OneBot answers the server's result code at once
//     (SendMessageOperation.cs: result.Result != 0 → that retcode,
//     "failed"); the fake uses 120 for it.
//   - otherwise the message is posted at once (it is in the history) and
//     QQ's confirmation takes ConfirmDelay: the answer comes then with the
//     message_id, or, when that is past KernelTimeout, the timeout above
//     comes at KernelTimeout — the message posted all the same.
func (f *Impl) send(action string, p map[string]json.RawMessage, echo json.RawMessage) (map[string]any, time.Duration) {
	c := Call{Params: p}
	segs := c.Message()
	kind, group, user := "private", int64(0), paramInt(p, "user_id")
	if action == "send_group_msg" || paramInt(p, "group_id") != 0 {
		kind, group = "group", paramInt(p, "group_id")
	}
	if f.Lagrange {
		for _, s := range segs {
			if s.Type != "reply" {
				continue
			}
			if id, err := strconv.ParseInt(s.Data["id"], 10, 64); err != nil || !f.known(id) {
				return napcatResponse(nil, "failed", 200, "failed", echo), 0
			}
		}
	}
	for _, s := range segs {
		if s.Type == "record" {
			if _, ok := recordAudio(s.Data["file"]); !ok {
				return napcatResponse(nil, "failed", 200, "failed", echo), 0
			}
		}
	}
	kernel := f.KernelTimeout
	if kernel <= 0 {
		kernel = 10 * time.Second
	}
	timeout := napcatResponse(nil, "failed", 1200, "Timeout: NTEvent serviceAndMethod:NodeIKernelMsgService/sendMsg ListenerName:NodeIKernelMsgListener/onMsgInfoListUpdate EventRet:\n{\n    \"result\": 0,\n    \"errMsg\": \"\"\n}\n", echo)
	if f.LLOneBot {
		timeout = napcatResponse(nil, "failed", 1200, "invoke timeout, nodeIKernelMsgService/sendMsg, "+string(p["message"]), echo)
	}
	if until, ok := f.muted[group]; kind == "group" && ok && time.Now().Before(until) {
		if f.Lagrange {
			return napcatResponse(nil, "failed", 120, "failed", echo), 0
		}
		return timeout, kernel
	}
	f.nextID++
	id := f.nextID
	f.remember(kind, group, user, histMsg{ID: id, UserID: f.SelfID, Time: time.Now().Unix(), Segs: segs, Name: f.Nickname})
	confirm := f.ConfirmDelay
	if f.Confirm != nil {
		confirm = f.Confirm()
	}
	if confirm > kernel {
		return timeout, kernel
	}
	return napcatResponse(map[string]any{"message_id": id}, "ok", 0, "", echo), confirm
}

// historyAnswer is get_group_msg_history / get_friend_msg_history with no
// message_seq: the chat's latest count messages, oldest first, as
// OB11Message objects (NapCat action/go-cqhttp/GetGroupMsgHistory.ts,
// getAioFirstViewLatestMsgs, and GetFriendMsgHistory.ts; LLOneBot
// src/onebot11/action/go-cqhttp/GetGroupMsgHistory.ts; Lagrange.OneBot
// Core/Operation/Message/GetGroupMessageHistoryOperation.cs). An empty
// history is NapCat's thrown "消息undefined不存在", retcode 1200. The
// caller holds f.mu.
func (f *Impl) historyAnswer(action string, p map[string]json.RawMessage, echo json.RawMessage) map[string]any {
	kind, group, user := "private", int64(0), paramInt(p, "user_id")
	if action == "get_group_msg_history" {
		kind, group = "group", paramInt(p, "group_id")
	}
	count := int(paramInt(p, "count"))
	if count <= 0 {
		count = 20
	}
	h := f.history[chatKey(kind, group, user)]
	if len(h) == 0 {
		return napcatResponse(nil, "failed", 1200, "消息undefined不存在", echo)
	}
	// message_seq (NapCat, LLOneBot: a message's id, MessageUnique.
	// getMsgIdAndPeerByShortId) or message_id (Lagrange.OneBot): the
	// count messages up to that one
	start := paramInt(p, "message_seq")
	if f.Lagrange || start == 0 {
		start = paramInt(p, "message_id")
	}
	if start != 0 {
		i := len(h)
		for j, m := range h {
			if m.ID == start {
				i = j + 1
				break
			}
		}
		h = h[:i]
	}
	if len(h) > count {
		h = h[len(h)-count:]
	}
	msgs := make([]map[string]any, 0, len(h))
	for _, m := range h {
		ob := map[string]any{"self_id": f.SelfID, "user_id": m.UserID, "time": m.Time, "message_id": m.ID, "message_seq": m.ID,
			"real_id": m.ID, "message_type": kind, "sender": map[string]any{"user_id": m.UserID, "nickname": m.Name, "card": ""},
			"raw_message": renderCQ(m.Segs), "font": 14, "sub_type": "normal", "message": m.Segs, "message_format": "array", "post_type": "message"}
		if m.UserID == f.SelfID {
			ob["post_type"] = "message_sent"
		}
		if kind == "group" {
			ob["group_id"] = group
		}
		msgs = append(msgs, ob)
	}
	return napcatResponse(map[string]any{"messages": msgs}, "ok", 0, "", echo)
}

// memberInfo is get_group_member_info, enough for the bot's own mute:
// NapCat and LLOneBot give shut_up_timestamp, the end of the member's
// mute in Unix seconds (NapCat packages/napcat-onebot/helper/data.ts
// member.shutUpTime; LLOneBot src/onebot11/entities.ts); Lagrange.OneBot's
// member has no such field (Core/Entity/OneBotGroupMember.cs). The caller
// holds f.mu.
func (f *Impl) memberInfo(p map[string]json.RawMessage, echo json.RawMessage) map[string]any {
	group, user := paramInt(p, "group_id"), paramInt(p, "user_id")
	m := map[string]any{"group_id": group, "user_id": user, "nickname": "", "card": "", "role": "member"}
	if !f.Lagrange {
		var shut int64
		if until, ok := f.muted[group]; ok && user == f.SelfID && time.Now().Before(until) {
			shut = until.Unix()
		}
		m["shut_up_timestamp"] = shut
	}
	return napcatResponse(m, "ok", 0, "", echo)
}

// Mute mutes the bot in a group for d and pushes the group_ban notice for
// it (NapCat event/notice/OB11GroupBanEvent.ts: notice_type group_ban,
// sub_type ban, group_id, operator_id, user_id, duration in seconds;
// LLOneBot and Lagrange.OneBot's OneBotGroupMute.cs the same fields).
// notice false mutes without the notice (one a reconnect lost).
func (f *Impl) Mute(groupID, operatorID int64, d time.Duration, notice bool) error {
	f.mu.Lock()
	f.init()
	if f.muted == nil {
		f.muted = map[int64]time.Time{}
	}
	f.muted[groupID] = time.Now().Add(d)
	f.mu.Unlock()
	if !notice {
		return nil
	}
	return f.event(map[string]any{"post_type": "notice", "notice_type": "group_ban", "sub_type": "ban", "group_id": groupID,
		"operator_id": operatorID, "user_id": f.SelfID, "duration": int64(d / time.Second)})
}

// Unmute lifts the bot's mute in a group and pushes the lift_ban notice
// (duration 0).
func (f *Impl) Unmute(groupID, operatorID int64) error {
	f.mu.Lock()
	delete(f.muted, groupID)
	f.mu.Unlock()
	return f.event(map[string]any{"post_type": "notice", "notice_type": "group_ban", "sub_type": "lift_ban", "group_id": groupID,
		"operator_id": operatorID, "user_id": f.SelfID, "duration": 0})
}

// Posted is what the bot has posted in a chat ("group", id or "private",
// user id), as Call.Text renders it: what members see, once each.
func (f *Impl) Posted(kind string, id int64) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, m := range f.history[chatKey(kind, id, id)] {
		if m.UserID == f.SelfID {
			if len(m.Segs) == 1 && m.Segs[0].Type == "record" {
				continue // a voice, not a text (Records)
			}
			out = append(out, Call{Params: map[string]json.RawMessage{"message": mustJSON(m.Segs)}}.Text())
		}
	}
	return out
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprint("onebottest: ", err))
	}
	return b
}

// LastPosted is the id of the bot's newest message in a chat ("group", id
// or "private", user id), 0 when it posted none.
func (f *Impl) LastPosted(kind string, id int64) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.history[chatKey(kind, id, id)]
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].UserID == f.SelfID {
			return h[i].ID
		}
	}
	return 0
}

// Forget drops a message from the histories, as Lagrange.OneBot's record
// store lacks a message said before it started.
func (f *Impl) Forget(id int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k, h := range f.history {
		for i, m := range h {
			if m.ID == id {
				f.history[k] = append(h[:i:i], h[i+1:]...)
				break
			}
		}
	}
}
