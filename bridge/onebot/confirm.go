package onebot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/bridge"
	"github.com/cyan-agent/cyan/clock"
)

// A send whose outcome is unknown is never sent again blindly. QQ
// confirms a sent message to the implementation, which waits for it
// (NapCat: NTQQMsgApi.sendMsg waits 10 s by default for
// onMsgInfoListUpdate with the message's sendStatus success,
// packages/napcat-core/apis/msg.ts and packages/napcat-onebot/config/
// config.ts baseTimeout, commit af07479; LLOneBot the same 10 s,
// src/ntqqapi/api/msg.ts sendMsg, commit c9bd964). When that wait runs
// out — NapCat answers retcode 1200 "Timeout: NTEvent serviceAndMethod:
// NodeIKernelMsgService/sendMsg …", LLOneBot retcode 1200 "invoke timeout,
// nodeIKernelMsgService/sendMsg …" — or cyan's own (Options.Timeout, 15 s
// by default, past theirs) or the connection drops after the request was
// written, the message may be in the chat all the same. The adapter then
// looks: the chat's latest messages (get_group_msg_history /
// get_friend_msg_history, which NapCat, LLOneBot and Lagrange.OneBot all
// serve), for one of the bot's own with the same text since the send
// began. Found: the send succeeded, with that id. Not found: nothing was
// posted, and the bridge may send it again — unless the bot is muted in
// the group (get_group_member_info's shut_up_timestamp, NapCat and
// LLOneBot), when it is held instead. When the adapter cannot look, the
// outcome stays unknown (bridge.SendError.Unknown) and it is not sent
// again.

// historyCount is how many of the chat's latest messages are searched.
const historyCount = 100

// errNoAnswer is a call whose request was written and whose answer did
// not come in time.
var errNoAnswer = errors.New("no answer")

// errLost is a call whose connection ended after its request was written.
var errLost = fmt.Errorf("%w after the request was written", errClosed)

// kernelTimeout reports whether a failed send is the implementation's own
// wait for QQ's confirmation running out: the message may be posted.
func kernelTimeout(r *Response) bool {
	s := r.Message + " " + r.Wording
	return strings.Contains(s, "Timeout: NTEvent") || strings.Contains(s, "invoke timeout") ||
		strings.Contains(strings.ToLower(s), "sendmsg") && strings.Contains(strings.ToLower(s), "timeout")
}

// mutedRefusal reports a send the implementation refused because the bot
// is muted in the group.
func mutedRefusal(r *Response) bool {
	s := r.Message + " " + r.Wording
	return strings.Contains(s, "禁言") || strings.Contains(strings.ToLower(s), "muted") || strings.Contains(strings.ToLower(s), "shut up")
}

// replyRefused reports Lagrange.OneBot refusing a message for its reply
// segment: ReplySegment.Build looks the replied message up with First(),
// which throws for an id it never stored, and OperationService answers
// any exception with retcode 200 "failed"
// (Lagrange.OneBot/Message/Entity/ReplySegment.cs and Core/Operation/
// OperationService.cs, commit e17fe35).
func replyRefused(segs []Segment, r *Response) bool {
	if r.Retcode != 200 {
		return false
	}
	for _, s := range segs {
		if s.Type == "reply" {
			return true
		}
	}
	return false
}

// unconfirmed settles a send whose outcome is unknown (why): it looks for
// the message in the chat and answers its id when found; else an error
// the bridge acts on (Temporary: not posted, send again; Muted; Unknown).
func (a *Adapter) unconfirmed(ctx context.Context, chat bridge.Chat, segs []Segment, began time.Time, why string) (string, error) {
	// the connection dropped after the request: wait for the next one. In
	// reverse mode the implementation dials back; in forward mode dial
	// connects again at once for this send (Run would end with its
	// connection, and the supervisor dial only once the bridge, whose
	// outbox is this send, has stopped).
	c := a.awaitLookable(ctx)
	if c == nil {
		return "", &bridge.SendError{Unknown: true, Unlooked: true, Msg: why + "; no connection to look for it in the chat"}
	}
	id, found, err := a.findSent(ctx, c, chat, segs, began)
	if found {
		a.log.Info("onebot: an unconfirmed send is in the chat; not sent again", "chat", chat.ID, "message_id", id, "why", why)
		return id, nil
	}
	if chat.Kind == bridge.Group {
		// not found (or not searched to the end) and muted now: QQ never
		// posted it (NapCat's and LLOneBot's sends time out while the bot
		// is muted); it waits for the mute's end
		if until, ok := a.mutedUntil(ctx, c, chat); ok {
			return "", &bridge.SendError{Muted: true, Until: until, Msg: why + "; the bot is muted in the group"}
		}
	}
	if err != nil {
		return "", &bridge.SendError{Unknown: true, Msg: why + "; could not look for it in the chat: " + err.Error()}
	}
	return "", &bridge.SendError{Temporary: true, Msg: why + "; it is not in the chat, so it is sent again"}
}

// awaitLookable returns the connection to look over (lookable), waiting
// for one (at most one call timeout) while Run runs; nil when none came.
func (a *Adapter) awaitLookable(ctx context.Context) *conn {
	c := a.current()
	deadline := a.o.Clock.Now().Add(a.o.Timeout)
	for !lookable(c) && a.o.Clock.Now().Before(deadline) && a.running() {
		if clock.Sleep(ctx, a.o.Clock, 100*time.Millisecond) != nil {
			break
		}
		c = a.current()
	}
	if c == nil || c.closed() {
		return nil
	}
	return c
}

var _ bridge.Finder = (*Adapter)(nil)

// FindSent implements bridge.Finder: the bot's own message with m's text
// in the chat's latest messages, said at or after since (findSent). The
// bridge asks it for a send a crash cut.
func (a *Adapter) FindSent(ctx context.Context, chat bridge.Chat, m bridge.Outgoing, since time.Time) (string, bool, error) {
	c := a.awaitLookable(ctx)
	if c == nil {
		return "", false, bridge.ErrOffline
	}
	return a.findSent(ctx, c, chat, toSegments(m), since)
}

// lookable reports a connection a send's outcome can be looked up over:
// open, and knowing who the bot is.
func lookable(c *conn) bool { return c != nil && !c.closed() && c.selfID() != "" }

// historyMessage is a message of get_group_msg_history's or
// get_friend_msg_history's answer.
type historyMessage struct {
	MessageID ID              `json:"message_id"`
	UserID    ID              `json:"user_id"`
	Time      int64           `json:"time"`
	Sender    Sender          `json:"sender"`
	Message   json.RawMessage `json:"message"`
}

// findSent looks for the bot's own message with segs' text in the chat's
// latest messages, said at or after began (less clockSkew), page by page.
func (a *Adapter) findSent(ctx context.Context, c *conn, chat bridge.Chat, segs []Segment, began time.Time) (string, bool, error) {
	self := c.selfID()
	if self == "" {
		return "", false, errors.New("the bot's own id is not known yet")
	}
	action, params := historyQuery(chat)
	want, since := segmentsText(segs), began.Add(-clockSkew).Unix()
	for range historyPages {
		resp, err := c.call(ctx, action, params, a.o.Timeout)
		if err != nil {
			return "", false, err
		}
		if resp.Status != "ok" {
			return "", false, errors.New(failure(action, resp))
		}
		p, err := matchSent(resp.Data, self, want, since)
		if err != nil {
			return "", false, fmt.Errorf("%s: %w", action, err)
		}
		if p.found {
			return p.id, true, nil
		}
		if p.n < historyCount || p.oldest == "" || p.oldestTime != 0 && p.oldestTime < since {
			return "", false, nil // searched back to before the send
		}
		pageBefore(params, p.oldest) // a busy chat
	}
	return "", false, errors.New("not found in the chat's latest messages, and the chat is too busy to look further back")
}

// historyQuery is the call for chat's latest historyCount messages.
func historyQuery(chat bridge.Chat) (action string, params map[string]any) {
	if chat.Kind == bridge.Group {
		return "get_group_msg_history", map[string]any{"group_id": number(chat.ID), "count": historyCount}
	}
	return "get_friend_msg_history", map[string]any{"user_id": number(chat.ID), "count": historyCount}
}

// pageBefore makes params ask for the page that ends with the message
// oldest (the page read last began with it). NapCat and LLOneBot take the
// message's id as message_seq (GetGroupMsgHistory.ts:
// MessageUnique.getMsgIdAndPeerByShortId), Lagrange.OneBot as message_id
// (GetGroupMessageHistoryOperation.cs).
func pageBefore(params map[string]any, oldest string) {
	params["message_seq"], params["message_id"] = number(oldest), number(oldest)
}

// historyPages bounds the pages of history searched for one send.
const historyPages = 3

// clockSkew is how far the implementation's message times (QQ's server
// clock, in whole seconds) may be behind cyan's: a message of the bot's
// said that long before the send began still counts, and the search stops
// at older ones.
const clockSkew = 10 * time.Second

// page is what one history answer told: the message sought (found, id),
// and how far back it reached (n messages, the oldest's id and time).
type page struct {
	id         string
	found      bool
	n          int
	oldest     string
	oldestTime int64
}

// matchSent finds, in a history answer's data ({"messages": [...]}, the
// implementation's text: untrusted), the newest message of self with the
// text want said at or after since (Unix seconds; a message without a time
// counts).
func matchSent(raw json.RawMessage, self, want string, since int64) (page, error) {
	var data struct {
		Messages []historyMessage `json:"messages"`
	}
	if err := json.Unmarshal(raw, &data); err != nil {
		return page{}, err
	}
	p := page{n: len(data.Messages)}
	if p.n > 0 {
		p.oldest, p.oldestTime = string(data.Messages[0].MessageID), data.Messages[0].Time
	}
	for i := len(data.Messages) - 1; i >= 0; i-- {
		m := data.Messages[i]
		from := m.UserID
		if from == "" {
			from = m.Sender.UserID
		}
		if string(from) != self || m.Time != 0 && m.Time < since || m.MessageID == "" {
			continue
		}
		got, _, err := parseMessage(m.Message)
		if err != nil {
			continue
		}
		if segmentsText(got) == want {
			p.id, p.found = string(m.MessageID), true
			return p, nil
		}
	}
	return p, nil
}

// segmentsText is what identifies a sent message: its text and mentions,
// trimmed (a reply segment is left out: implementations show it
// differently).
func segmentsText(segs []Segment) string {
	var b strings.Builder
	for _, s := range segs {
		switch s.Type {
		case "text":
			b.WriteString(s.Data["text"])
		case "at":
			b.WriteString("@" + s.Data["qq"])
		}
	}
	return strings.TrimSpace(b.String())
}

// mutedUntil asks whether the bot is muted in the group: its
// shut_up_timestamp (NapCat packages/napcat-onebot/helper/data.ts
// member.shutUpTime; LLOneBot src/onebot11/entities.ts) in the future.
func (a *Adapter) mutedUntil(ctx context.Context, c *conn, chat bridge.Chat) (time.Time, bool) {
	resp, err := c.call(ctx, "get_group_member_info", map[string]any{"group_id": number(chat.ID), "user_id": number(c.selfID()), "no_cache": true}, a.o.Timeout)
	if err != nil || resp.Status != "ok" {
		return time.Time{}, false
	}
	var m struct {
		ShutUp int64 `json:"shut_up_timestamp"`
	}
	if json.Unmarshal(resp.Data, &m) != nil || m.ShutUp <= 0 {
		return time.Time{}, false
	}
	until := time.Unix(m.ShutUp, 0)
	if !until.After(a.o.Clock.Now()) {
		return time.Time{}, false
	}
	return until, true
}

var _ bridge.CatchUp = (*Adapter)(nil)

// catchUpPages bounds the pages of history read to catch up on one chat:
// 300 messages, the newest, when more were said while the bridge was away.
const catchUpPages = 3

// Missed implements bridge.CatchUp: the chat's latest messages
// (get_group_msg_history, get_friend_msg_history, as findSent reads them)
// said after the one with id after, page by page back to it — or, when it
// is not among them, back to its time.
func (a *Adapter) Missed(ctx context.Context, chat bridge.Chat, after string, at time.Time) ([]*bridge.Message, error) {
	c := a.current()
	if !lookable(c) {
		return nil, bridge.ErrOffline
	}
	action, params := historyQuery(chat)
	since := at.Add(-clockSkew).Unix()
	var pages [][]*Event // newest page first
	found := false
	for range catchUpPages {
		resp, err := c.call(ctx, action, params, a.o.Timeout)
		if err != nil {
			return nil, err
		}
		if resp.Retcode == 1404 {
			return nil, bridge.ErrUnsupported // an implementation without the action
		}
		if resp.Status != "ok" {
			return nil, errors.New(failure(action, resp))
		}
		evs, err := historyEvents(resp.Data, chat)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", action, err)
		}
		for i, ev := range evs {
			if string(ev.MessageID) == after {
				evs, found = evs[i+1:], true
				break
			}
		}
		pages = append(pages, evs)
		if found || len(evs) < historyCount || len(evs) == 0 || evs[0].Time != 0 && evs[0].Time < since {
			break
		}
		pageBefore(params, string(evs[0].MessageID))
	}
	var out []*bridge.Message
	taken := map[ID]bool{}
	for i := len(pages) - 1; i >= 0; i-- {
		for _, ev := range pages[i] {
			if !found && ev.Time != 0 && ev.Time < since || ev.MessageID != "" && taken[ev.MessageID] {
				continue // before the mark; or the page's anchor, which the page before ends with
			}
			taken[ev.MessageID] = true
			out = append(out, toMessageWith(ev, a.fetch, func(id string) []node { return a.forward(ctx, c, id) }))
		}
	}
	return out, nil
}

// historyEvents reads a history answer's messages ({"messages": [...]},
// the implementation's text: untrusted) as message events of chat, oldest
// first. A message the events' parser refuses is skipped; one without
// post_type, message_type or group_id (implementations differ in what a
// history message carries) is taken as chat's.
func historyEvents(raw json.RawMessage, chat bridge.Chat) ([]*Event, error) {
	var data struct {
		Messages []map[string]json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(raw, &data); err != nil {
		return nil, fmt.Errorf("a history answer that is not {\"messages\": [...]}: %v", err)
	}
	kind := "private"
	if chat.Kind == bridge.Group {
		kind = "group"
	}
	var out []*Event
	for _, m := range data.Messages {
		if m == nil {
			continue
		}
		m["post_type"] = json.RawMessage(`"message"`) // the bot's own (message_sent) too: the bridge skips them
		if _, ok := m["message_type"]; !ok {
			m["message_type"], _ = json.Marshal(kind)
		}
		if _, ok := m["group_id"]; !ok && kind == "group" {
			m["group_id"], _ = json.Marshal(chat.ID)
		}
		b, err := json.Marshal(m)
		if err != nil {
			continue
		}
		f, err := ParseFrame(b)
		if err != nil || f.Event == nil || f.Event.MessageType != kind || kind == "group" && string(f.Event.GroupID) != chat.ID {
			continue // not a message of this chat
		}
		out = append(out, f.Event)
	}
	return out, nil
}
