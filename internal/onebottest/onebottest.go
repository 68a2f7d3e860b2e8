package onebottest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// Seg is a message segment.
type Seg struct {
	Type string            `json:"type"`
	Data map[string]string `json:"data"`
}

// Text, At, Reply, Face, Image and Record build segments.
func Text(s string) Seg          { return Seg{"text", map[string]string{"text": s}} }
func At(qq string) Seg           { return Seg{"at", map[string]string{"qq": qq}} }
func Reply(id string) Seg        { return Seg{"reply", map[string]string{"id": id}} }
func Face(id string) Seg         { return Seg{"face", map[string]string{"id": id}} }
func Image(file, url string) Seg { return Seg{"image", map[string]string{"file": file, "url": url}} }
func Record(file string) Seg     { return Seg{"record", map[string]string{"file": file}} }

// Call is an API call the implementation received.
type Call struct {
	Action string
	Params map[string]json.RawMessage
	Echo   json.RawMessage
	At     time.Time
}

// Message is the message of a send_* call, as segments (whichever format
// it was sent in).
func (c Call) Message() []Seg {
	raw := c.Params["message"]
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return parseCQ(s)
	}
	var segs []Seg
	if json.Unmarshal(raw, &segs) == nil {
		return segs
	}
	var one Seg
	if json.Unmarshal(raw, &one) == nil {
		return []Seg{one}
	}
	return nil
}

// Text is the plain text of a send_* call's message, with at segments as
// "@<qq>" and a reply as "<reply id>".
func (c Call) Text() string {
	var b strings.Builder
	for _, s := range c.Message() {
		switch s.Type {
		case "text":
			b.WriteString(s.Data["text"])
		case "at":
			b.WriteString("@<" + s.Data["qq"] + ">")
		case "reply":
			b.WriteString("<reply " + s.Data["id"] + ">")
		}
	}
	return b.String()
}

// Failure makes the next call of an action fail.
type Failure struct {
	Retcode int
	Wording string
}

// Impl is a fake OneBot implementation. Set the fields before use.
type Impl struct {
	SelfID   int64
	Nickname string
	Token    string
	// Format of the events pushed: "array" (default) or "string".
	Format string
	// NoTyping makes set_input_status unknown (retcode 1404), as in
	// implementations other than NapCat.
	NoTyping bool
	// HeartInterval, when positive, sends a heartbeat meta event that often
	// on every connection, from the moment it opens (NapCat's
	// heartInterval; Lagrange.OneBot's HeartBeatInterval, 5 s by default);
	// negative: none, the test sends them (Heartbeat).
	HeartInterval time.Duration
	// HTTPRefusal makes the forward server refuse a wrong token with an
	// HTTP 401/403 before the upgrade (go-cqhttp's way) instead of NapCat's
	// and LLOneBot's: accept, send the 1403 frame, close.
	HTTPRefusal bool
	// Lagrange makes the reverse client Lagrange.OneBot's: no User-Agent
	// of its own, the Authorization header only when a token is set, a
	// 5 s heartbeat unless HeartInterval says otherwise.
	Lagrange bool
	// LLOneBot makes the send errors LLOneBot's wording (its kernel
	// timeout "invoke timeout, nodeIKernelMsgService/sendMsg, …").
	LLOneBot bool
	// ConfirmDelay is how long QQ takes to confirm a sent message (0: at
	// once). The message is in the chat from the start; the answer waits
	// for the confirmation, or for KernelTimeout (see Sends).
	ConfirmDelay time.Duration
	// Confirm, when set, gives each send's ConfirmDelay (a load that
	// varies).
	Confirm func() time.Duration
	// KernelTimeout is how long the implementation waits for QQ's
	// confirmation of a send (0: 10 s, NapCat's and LLOneBot's default).
	KernelTimeout time.Duration

	muted   map[int64]time.Time // group → muted until (see Mute)
	history map[string][]histMsg

	mu      sync.Mutex
	ws      *websocket.Conn
	calls   []Call
	fail    map[string][]Failure
	drop    map[string][]bool // action → its next calls' connection drops (posted or not); see DropNext
	nextID  int64
	changed chan struct{}
	gone    chan struct{} // closed when the current connection ends
	dials   int           // forward connections accepted or refused
	// offline: the account is logged out (SetOffline); forwards answer
	// get_forward_msg (SetForward). See events.go.
	offline  bool
	forwards map[string][]ForwardMsg
}

func (f *Impl) init() {
	if f.changed == nil {
		f.changed = make(chan struct{})
		f.fail = map[string][]Failure{}
		f.drop = map[string][]bool{}
		f.nextID = 1000
	}
}

func (f *Impl) notify() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// Connect dials a reverse WebSocket URL as the implementation does, with
// the given headers (X-Self-ID, X-Client-Role: Universal and the token are
// added), and serves the connection in the background. It returns the
// HTTP status of a refused handshake in the error.
func (f *Impl) Connect(ctx context.Context, url string) error {
	hdr := http.Header{}
	hdr.Set("X-Self-ID", fmt.Sprint(f.SelfID))
	hdr.Set("X-Client-Role", "Universal")
	switch {
	case f.Lagrange && f.Token != "":
		hdr.Set("Authorization", "Bearer "+f.Token)
	case !f.Lagrange:
		// NapCat sends the header whatever the token, "Bearer " when empty.
		hdr.Set("Authorization", "Bearer "+f.Token)
		hdr.Set("User-Agent", "OneBot/11")
	}
	ws, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		if resp != nil {
			return &RefusedError{Status: resp.StatusCode, Err: err}
		}
		return err
	}
	f.attach(ws)
	return nil
}

// RefusedError is a handshake the server refused.
type RefusedError struct {
	Status int
	Err    error
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("refused with HTTP %d: %v", e.Status, e.Err)
}

// ServeHTTP serves the forward WebSocket (any path), checking the token
// as NapCat's OB11WebSocketServerAdapter.authorize does: ?access_token=
// first, else the Authorization header after "Bearer "; a wrong or
// missing one gets the upgrade, then {"status":"failed","retcode":1403,
// "message":"token验证失败",…} and a close (HTTPRefusal: an HTTP 401/403
// instead).
func (f *Impl) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.init()
	f.dials++
	f.notify()
	f.mu.Unlock()
	if f.Token != "" {
		tok := r.URL.Query().Get("access_token")
		if tok == "" {
			h := r.Header.Get("Authorization")
			if i := strings.LastIndex(h, "Bearer "); i >= 0 {
				tok = h[i+len("Bearer "):]
			} else {
				tok = h
			}
		}
		if tok != f.Token {
			if f.HTTPRefusal {
				status := http.StatusForbidden
				if tok == "" {
					status = http.StatusUnauthorized
				}
				http.Error(w, "forbidden", status)
				return
			}
			ws, err := websocket.Accept(w, r, nil)
			if err != nil {
				return
			}
			out, _ := json.Marshal(napcatResponse(nil, "failed", 1403, "token验证失败", nil))
			_ = ws.Write(r.Context(), websocket.MessageText, out)
			ws.Close(websocket.StatusNormalClosure, "")
			return
		}
	}
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	gone := f.attach(ws)
	select {
	case <-gone:
	case <-r.Context().Done():
	}
}

// Dials is how many forward connections were attempted (refused ones
// included).
func (f *Impl) Dials() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.dials
}

// napcatResponse is OB11Response.createResponse: status, retcode, data,
// message, wording (the same text), echo (null when none) and stream.
func napcatResponse(data any, status string, retcode int, message string, echo json.RawMessage) map[string]any {
	resp := map[string]any{"status": status, "retcode": retcode, "data": data, "message": message, "wording": message,
		"echo": nil, "stream": "normal-action"}
	if len(echo) > 0 {
		resp["echo"] = echo
	}
	return resp
}

// attach makes ws the current connection and serves it.
func (f *Impl) attach(ws *websocket.Conn) chan struct{} {
	ws.SetReadLimit(8 << 20)
	gone := make(chan struct{})
	f.mu.Lock()
	f.init()
	if f.ws != nil {
		f.ws.Close(websocket.StatusNormalClosure, "replaced")
	}
	f.ws, f.gone = ws, gone
	f.notify()
	f.mu.Unlock()
	go func() {
		defer func() {
			f.mu.Lock()
			if f.ws == ws {
				f.ws = nil
				f.notify()
			}
			f.mu.Unlock()
			close(gone)
		}()
		_ = f.event(map[string]any{"post_type": "meta_event", "meta_event_type": "lifecycle", "sub_type": "connect"})
		if every := f.heartInterval(); every > 0 {
			go f.heartbeats(ws, gone, every)
		}
		for {
			_, b, err := ws.Read(context.Background())
			if err != nil {
				return
			}
			f.answer(ws, b)
		}
	}()
	return gone
}

// Connected reports whether a connection is up.
func (f *Impl) Connected() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ws != nil
}

// Disconnect closes the current connection, as an implementation that
// restarts or loses the network does.
func (f *Impl) Disconnect() {
	f.mu.Lock()
	ws, gone := f.ws, f.gone
	f.mu.Unlock()
	if ws == nil {
		return
	}
	ws.Close(websocket.StatusGoingAway, "implementation restarting")
	<-gone
}

// answer handles one API call as NapCat's handleMessage does: a frame
// that is not JSON gets retcode 1400 "json解析失败,请检查数据格式"; an
// unknown action 1404 "不支持的Api <action>"; a failing handler 1200 with
// its error (FailNext); else ok with the action's data.
func (f *Impl) answer(ws *websocket.Conn, b []byte) {
	var req struct {
		Action string                     `json:"action"`
		Params map[string]json.RawMessage `json:"params"`
		Echo   json.RawMessage            `json:"echo"`
	}
	if err := json.Unmarshal(b, &req); err != nil {
		out, _ := json.Marshal(napcatResponse(nil, "failed", 1400, "json解析失败,请检查数据格式", nil))
		_ = ws.Write(context.Background(), websocket.MessageText, out)
		return
	}
	f.mu.Lock()
	f.init()
	f.calls = append(f.calls, Call{Action: req.Action, Params: req.Params, Echo: req.Echo, At: time.Now()})
	if q := f.drop[req.Action]; len(q) > 0 {
		posted := q[0]
		f.drop[req.Action] = q[1:]
		if posted {
			f.send(req.Action, req.Params, req.Echo) // its answer is lost with the connection
		}
		f.notify()
		f.mu.Unlock()
		ws.CloseNow()
		return
	}
	var fail *Failure
	if q := f.fail[req.Action]; len(q) > 0 {
		fail = &q[0]
		f.fail[req.Action] = q[1:]
	}
	var resp map[string]any
	switch {
	case fail != nil:
		resp = napcatResponse(nil, "failed", fail.Retcode, fail.Wording, req.Echo)
	case req.Action == "send_group_msg" || req.Action == "send_private_msg" || req.Action == "send_msg":
		var delay time.Duration
		resp, delay = f.send(req.Action, req.Params, req.Echo)
		if delay > 0 {
			f.notify()
			f.mu.Unlock()
			out, _ := json.Marshal(resp)
			time.AfterFunc(delay, func() { _ = ws.Write(context.Background(), websocket.MessageText, out) })
			return
		}
	case req.Action == "get_group_msg_history" || req.Action == "get_friend_msg_history":
		resp = f.historyAnswer(req.Action, req.Params, req.Echo)
	case req.Action == "get_group_member_info":
		resp = f.memberInfo(req.Params, req.Echo)
	case req.Action == "get_login_info":
		resp = napcatResponse(map[string]any{"user_id": f.SelfID, "nickname": f.Nickname}, "ok", 0, "", req.Echo)
	case req.Action == "set_input_status" && !f.NoTyping:
		resp = napcatResponse(map[string]any{"result": 0, "errMsg": ""}, "ok", 0, "", req.Echo)
	default:
		var ok bool
		if resp, ok = f.more(req.Action, req.Params, req.Echo); !ok {
			resp = napcatResponse(nil, "failed", 1404, "不支持的Api "+req.Action, req.Echo)
		}
	}
	f.notify()
	f.mu.Unlock()
	out, _ := json.Marshal(resp)
	_ = ws.Write(context.Background(), websocket.MessageText, out)
}

func (f *Impl) heartInterval() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.HeartInterval == 0 && f.Lagrange {
		return 5 * time.Second
	}
	return f.HeartInterval
}

// heartbeats sends a heartbeat every interval on ws until it ends
// (NapCat's setInterval in open(); Lagrange.OneBot's HeartbeatLoop).
func (f *Impl) heartbeats(ws *websocket.Conn, gone <-chan struct{}, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-gone:
			return
		}
		f.mu.Lock()
		current := f.ws == ws
		f.mu.Unlock()
		if !current {
			return
		}
		_ = f.Heartbeat(every)
	}
}

// FailNext makes the next call of action fail with retcode and wording.
func (f *Impl) FailNext(action string, fl Failure) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.init()
	f.fail[action] = append(f.fail[action], fl)
}

// DropNext makes the connection drop when the next call of action (a send)
// has been read, before it is answered: the network failing, or the
// implementation restarting, after cyan wrote the request. posted says
// whether the message was posted first or never. Posted is NapCat's way
// when only the socket goes: its forward server runs each action to its
// end whatever becomes of the socket, and checkStateAndReply drops the
// answer with "WebSocket is not open" (packages/napcat-onebot/network/
// websocket-server.ts, handleMessage and checkStateAndReply, commit
// af07479). Never posted is a request that did not reach handleMessage:
// lost in flight, or with the process. The caller cannot tell which from
// the lost answer; only the chat's history can.
func (f *Impl) DropNext(action string, posted bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.init()
	f.drop[action] = append(f.drop[action], posted)
}

// Calls returns the API calls so far (of the given actions, or all).
func (f *Impl) Calls(actions ...string) []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Call
	for _, c := range f.calls {
		if len(actions) == 0 || slices.Contains(actions, c.Action) {
			out = append(out, c)
		}
	}
	return out
}

// WaitCalls waits until n calls of the actions have arrived.
func (f *Impl) WaitCalls(ctx context.Context, n int, actions ...string) ([]Call, error) {
	for {
		f.mu.Lock()
		f.init()
		ch := f.changed
		f.mu.Unlock()
		if got := f.Calls(actions...); len(got) >= n {
			return got, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return f.Calls(actions...), fmt.Errorf("waiting for %d %v calls: %w", n, actions, ctx.Err())
		}
	}
}

// WaitConnected waits until a connection is up.
func (f *Impl) WaitConnected(ctx context.Context) error {
	for {
		f.mu.Lock()
		f.init()
		ch, up := f.changed, f.ws != nil
		f.mu.Unlock()
		if up {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// ErrNotConnected is an event pushed with no connection up. The event is
// dropped, as NapCat drops it: its reverse WebSocket client sends an event
// only while the socket is open (packages/napcat-onebot/network/
// websocket-client.ts, onEvent, commit af07479); a message is in the
// chat's history all the same (Group, Private).
var ErrNotConnected = errors.New("onebottest: not connected")

// event pushes one event object (time and self_id are added).
func (f *Impl) event(ev map[string]any) error {
	ev["time"] = time.Now().Unix()
	ev["self_id"] = f.SelfID
	b, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	return f.Raw(b)
}

// Raw pushes a frame as it is (malformed ones included).
func (f *Impl) Raw(b []byte) error {
	f.mu.Lock()
	ws := f.ws
	f.mu.Unlock()
	if ws == nil {
		return ErrNotConnected
	}
	return ws.Write(context.Background(), websocket.MessageText, b)
}

// Heartbeat pushes a heartbeat meta event.
func (f *Impl) Heartbeat(interval time.Duration) error {
	return f.event(map[string]any{"post_type": "meta_event", "meta_event_type": "heartbeat",
		"status": f.heartStatus(), "interval": interval.Milliseconds()})
}

// Sender is who says a message.
type Sender struct {
	UserID   int64
	Nickname string
	Card     string
}

// Group pushes a group message event and returns its message_id.
func (f *Impl) Group(groupID int64, s Sender, segs ...Seg) (int64, error) {
	return f.message("group", groupID, s, segs, 0)
}

// GroupWithID pushes a group message event with a given message_id (to
// send the same one twice).
func (f *Impl) GroupWithID(id, groupID int64, s Sender, segs ...Seg) error {
	_, err := f.message("group", groupID, s, segs, id)
	return err
}

// Private pushes a private message event and returns its message_id.
func (f *Impl) Private(s Sender, segs ...Seg) (int64, error) {
	return f.message("private", 0, s, segs, 0)
}

func (f *Impl) message(kind string, groupID int64, s Sender, segs []Seg, id int64) (int64, error) {
	f.mu.Lock()
	f.init()
	if id == 0 {
		f.nextID++
		id = f.nextID
	}
	format := f.Format
	f.mu.Unlock()
	raw := renderCQ(segs)
	ev := map[string]any{"post_type": "message", "message_type": kind, "message_id": id, "user_id": s.UserID,
		"raw_message": raw, "font": 0}
	f.mu.Lock()
	f.remember(kind, groupID, s.UserID, histMsg{ID: id, UserID: s.UserID, Time: time.Now().Unix(), Segs: segs, Name: s.Nickname})
	f.mu.Unlock()
	if format == "string" {
		ev["message"] = raw
	} else {
		ev["message"] = segs
	}
	if kind == "group" {
		ev["sub_type"], ev["group_id"] = "normal", groupID
		ev["sender"] = map[string]any{"user_id": s.UserID, "nickname": s.Nickname, "card": s.Card, "role": "member"}
	} else {
		ev["sub_type"] = "friend"
		ev["sender"] = map[string]any{"user_id": s.UserID, "nickname": s.Nickname}
	}
	return id, f.event(ev)
}

// renderCQ writes segments as a CQ-code string as NapCat's encodeCQCode
// does (packages/napcat-onebot/helper/cqcode.ts): text escaped &, [, ];
// other segments "[CQ:type,k=v,…]" with every data value escaped &, [, ],
// "," and empty values left out. NapCat keeps the data object's order;
// here the keys go in a fixed order (qq, id, file, url first, then the
// rest sorted), which no parser depends on.
func renderCQ(segs []Seg) string {
	text := strings.NewReplacer("&", "&amp;", "[", "&#91;", "]", "&#93;")
	val := strings.NewReplacer("&", "&amp;", "[", "&#91;", "]", "&#93;", ",", "&#44;")
	var b strings.Builder
	for _, s := range segs {
		if s.Type == "text" {
			b.WriteString(text.Replace(s.Data["text"]))
			continue
		}
		b.WriteString("[CQ:" + s.Type)
		keys := make([]string, 0, len(s.Data))
		for k := range s.Data {
			keys = append(keys, k)
		}
		rank := func(k string) int {
			if i := slices.Index([]string{"qq", "id", "file", "url"}, k); i >= 0 {
				return i
			}
			return 4
		}
		slices.SortFunc(keys, func(a, c string) int {
			if d := rank(a) - rank(c); d != 0 {
				return d
			}
			return strings.Compare(a, c)
		})
		for _, k := range keys {
			if v := s.Data[k]; v != "" {
				b.WriteString("," + k + "=" + val.Replace(v))
			}
		}
		b.WriteString("]")
	}
	return b.String()
}

// parseCQ reads a CQ-code string (for recording what was sent as a string).
func parseCQ(s string) []Seg {
	un := strings.NewReplacer("&#44;", ",", "&#91;", "[", "&#93;", "]", "&amp;", "&")
	var out []Seg
	for len(s) > 0 {
		i := strings.Index(s, "[CQ:")
		if i < 0 {
			out = append(out, Text(un.Replace(s)))
			break
		}
		if i > 0 {
			out = append(out, Text(un.Replace(s[:i])))
		}
		end := strings.IndexByte(s[i:], ']')
		if end < 0 {
			out = append(out, Text(un.Replace(s[i:])))
			break
		}
		code := s[i+4 : i+end]
		s = s[i+end+1:]
		name, params, _ := strings.Cut(code, ",")
		seg := Seg{Type: name, Data: map[string]string{}}
		for _, kv := range strings.Split(params, ",") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				seg.Data[k] = un.Replace(v)
			}
		}
		out = append(out, seg)
	}
	return out
}

// GroupRecall pushes NapCat's group_recall notice
// (OB11GroupRecallNoticeEvent.ts): group_id, user_id (the sender),
// operator_id (who recalled), message_id.
func (f *Impl) GroupRecall(groupID, userID, operatorID, messageID int64) error {
	return f.event(map[string]any{"post_type": "notice", "notice_type": "group_recall", "group_id": groupID,
		"user_id": userID, "operator_id": operatorID, "message_id": messageID})
}

// FriendRecall pushes NapCat's friend_recall notice
// (OB11FriendRecallNoticeEvent.ts): user_id, message_id.
func (f *Impl) FriendRecall(userID, messageID int64) error {
	return f.event(map[string]any{"post_type": "notice", "notice_type": "friend_recall", "user_id": userID, "message_id": messageID})
}

// GroupPoke pushes NapCat's group poke (OB11PokeEvent.ts,
// OB11GroupPokeEvent): notice_type notify, sub_type poke, group_id,
// user_id (who poked), target_id (who was poked).
func (f *Impl) GroupPoke(groupID, userID, targetID int64) error {
	return f.event(map[string]any{"post_type": "notice", "notice_type": "notify", "sub_type": "poke", "group_id": groupID,
		"user_id": userID, "target_id": targetID, "raw_info": []any{}})
}

// FriendPoke pushes NapCat's friend poke (OB11FriendPokeEvent): user_id
// the friend's chat, sender_id who poked, target_id who was poked.
func (f *Impl) FriendPoke(userID, senderID, targetID int64) error {
	return f.event(map[string]any{"post_type": "notice", "notice_type": "notify", "sub_type": "poke",
		"user_id": userID, "sender_id": senderID, "target_id": targetID, "raw_info": []any{}})
}
