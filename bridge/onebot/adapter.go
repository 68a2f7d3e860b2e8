package onebot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/cyan-agent/cyan/bridge"
)

// Options configure New.
type Options struct {
	Name        string // the bridge's name, for logs
	Mode        string // "reverse" or "forward"
	URL         string // forward mode: the implementation's ws:// URL
	AccessToken string
	SelfID      string // reverse mode: accept only this account ("" any)
	Format      string // outgoing: "array" (default) or "string"
	// Reconnect is the longest wait between forward connection attempts
	// (they start at a second and double). 0: 30 s.
	Reconnect time.Duration
	// Timeout bounds one API call. 0: 15 s.
	Timeout    time.Duration
	Clock      bridge.Clock
	HTTPClient *http.Client // dials and media downloads; nil: a default
	Logger     *slog.Logger
}

// Adapter is a OneBot v11 connection; it implements bridge.Adapter and, in
// reverse mode, is served its connections through a ReverseMux.
type Adapter struct {
	o     Options
	log   *slog.Logger
	fetch func(ctx context.Context, url string, max int64) ([]byte, error)

	mu       sync.Mutex
	ctx      context.Context // Run's; nil when not running
	sink     bridge.Sink
	api      *conn // the connection calls go on
	self     bridge.User
	typingNo bool // set_input_status is unknown to the implementation
	conns    sync.WaitGroup
	// started is closed once Run has begun: a reverse connection that
	// arrives while the daemon is still starting waits for it.
	started chan struct{}
	start   sync.Once
}

var _ bridge.Adapter = (*Adapter)(nil)

// New checks the options.
func New(o Options) (*Adapter, error) {
	switch o.Mode {
	case "reverse":
	case "forward":
		if !strings.HasPrefix(o.URL, "ws://") && !strings.HasPrefix(o.URL, "wss://") {
			return nil, fmt.Errorf("onebot %s: url %q is not a ws:// or wss:// URL", o.Name, o.URL)
		}
	default:
		return nil, fmt.Errorf("onebot %s: mode %q is neither reverse nor forward", o.Name, o.Mode)
	}
	if o.Reconnect <= 0 {
		o.Reconnect = 30 * time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 15 * time.Second
	}
	if o.Format == "" {
		o.Format = "array"
	}
	if o.Clock == nil {
		o.Clock = realClock{}
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Adapter{o: o, log: o.Logger, fetch: httpFetch(o.HTTPClient), started: make(chan struct{})}, nil
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Platform implements bridge.Adapter.
func (a *Adapter) Platform() string { return "onebot" }

// Mode is "reverse" or "forward".
func (a *Adapter) Mode() string { return a.o.Mode }

// Run implements bridge.Adapter: in forward mode it dials and redials the
// implementation; in reverse mode it serves the connections the ReverseMux
// hands it until ctx ends.
func (a *Adapter) Run(ctx context.Context, sink bridge.Sink) error {
	a.mu.Lock()
	a.ctx, a.sink = ctx, sink
	a.mu.Unlock()
	a.start.Do(func() { close(a.started) })
	defer func() {
		a.mu.Lock()
		a.ctx = nil
		if a.api != nil {
			a.api.close(websocket.StatusGoingAway, "cyan is stopping", nil)
		}
		a.mu.Unlock()
		a.conns.Wait()
	}()
	if a.o.Mode == "reverse" {
		a.log.Info("onebot: waiting for the implementation to connect (reverse WebSocket at /onebot/v11/ws)")
		<-ctx.Done()
		return nil
	}
	return a.dialLoop(ctx)
}

// dialLoop connects to the implementation, again and again, waiting longer
// after each failure (1 s doubling up to Reconnect).
func (a *Adapter) dialLoop(ctx context.Context) error {
	wait := time.Second
	for {
		hdr := http.Header{}
		if a.o.AccessToken != "" {
			hdr.Set("Authorization", "Bearer "+a.o.AccessToken)
		}
		dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		ws, resp, err := websocket.Dial(dctx, a.o.URL, &websocket.DialOptions{HTTPClient: a.o.HTTPClient, HTTPHeader: hdr})
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			status := 0
			if resp != nil {
				status = resp.StatusCode
			}
			switch status {
			case http.StatusUnauthorized, http.StatusForbidden:
				err = fmt.Errorf("the implementation at %s refused the access token (HTTP %d): set bridges.onebot[].access_token to the token in its forward WebSocket settings", a.o.URL, status)
			default:
				err = fmt.Errorf("cannot connect to %s: %w", a.o.URL, err)
			}
			a.log.Warn("onebot: connection failed; trying again", "err", err, "in", wait)
			a.sink.Problem(err)
		} else {
			wait = time.Second
			c := newConn(ws, RoleUniversal, "")
			a.conns.Add(1)
			a.serve(ctx, c)
		}
		select {
		case <-a.o.Clock.After(wait):
		case <-ctx.Done():
			return nil
		}
		wait = min(wait*2, a.o.Reconnect)
	}
}

// serve runs one connection until it ends: its read loop, its heartbeat
// watch, and the login query that tells who the bot is.
func (a *Adapter) serve(ctx context.Context, c *conn) {
	defer a.conns.Done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	a.mu.Lock()
	if c.canCall() {
		if old := a.api; old != nil {
			old.close(websocket.StatusPolicyViolation, "replaced by a new connection", errors.New("replaced by a new connection"))
		}
		a.api = c
	}
	a.mu.Unlock()
	if c.canCall() {
		if self := c.selfID(); self != "" {
			a.connected(bridge.User{ID: self})
		}
		go a.safely("login", func() { a.login(ctx, c) })
	}
	beats := make(chan time.Duration, 1)
	go a.safely("heartbeat watch", func() { a.watchHeartbeat(ctx, c, beats) })
	err := a.readLoop(ctx, c, beats)
	c.close(websocket.StatusNormalClosure, "", err)
	a.mu.Lock()
	current := a.api == c
	if current {
		a.api = nil
	}
	a.mu.Unlock()
	if current {
		if ctx.Err() != nil {
			err = nil
		} else if r := c.reason(); r != nil {
			err = r
		}
		a.sink.Disconnected(err)
	}
}

// safely runs f, turning a panic (an event the handling did not foresee)
// into a log line with its stack instead of the daemon's end; the event is
// skipped, the connection goes on.
func (a *Adapter) safely(what string, f func()) {
	defer func() {
		if v := recover(); v != nil {
			a.log.Error("onebot: panic handling "+what+"; skipped", "panic", v, "stack", string(debug.Stack()))
		}
	}()
	f()
}

// login asks who the bot is (get_login_info) and reports the connection.
func (a *Adapter) login(ctx context.Context, c *conn) {
	resp, err := c.call(ctx, "get_login_info", nil, a.o.Timeout)
	if err != nil || resp.Status != "ok" {
		if c.selfID() == "" {
			a.log.Warn("onebot: get_login_info failed; the bot's id comes from the first event", "err", err)
		}
		return
	}
	var info struct {
		UserID   ID     `json:"user_id"`
		Nickname string `json:"nickname"`
	}
	if json.Unmarshal(resp.Data, &info) == nil && info.UserID != "" {
		c.learnSelf(string(info.UserID))
		a.connected(bridge.User{ID: string(info.UserID), Name: info.Nickname})
	}
}

func (a *Adapter) connected(u bridge.User) {
	a.mu.Lock()
	if a.self.ID == u.ID && u.Name == "" {
		u.Name = a.self.Name
	}
	a.self = u
	a.mu.Unlock()
	a.sink.Connected(u)
}

// readLoop reads frames until the connection ends; a malformed frame is
// logged and skipped. Responses are matched at once; events are handled in
// order by a goroutine of their own, so a slow one (an image to download)
// never holds up the answers to API calls.
func (a *Adapter) readLoop(ctx context.Context, c *conn, beats chan<- time.Duration) error {
	events := make(chan *Event, 1024)
	handled := make(chan struct{})
	go func() {
		defer close(handled)
		for ev := range events {
			a.safely("event", func() { a.event(ctx, c, ev, beats) })
		}
	}()
	defer func() {
		close(events)
		<-handled
	}()
	for {
		b, err := c.read(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ce websocket.CloseError
			if errors.As(err, &ce) {
				return fmt.Errorf("the implementation closed the connection (%d %s)", ce.Code, ce.Reason)
			}
			return fmt.Errorf("connection lost: %w", err)
		}
		f, err := ParseFrame(b)
		if err != nil {
			a.log.Warn("onebot: malformed frame skipped", "err", err, "frame", clip(b, 200))
			a.sink.Problem(fmt.Errorf("a malformed frame was skipped: %w", err))
			continue
		}
		if f.Response != nil {
			if !c.deliver(f.Response) {
				a.log.Debug("onebot: a response nobody waits for", "echo", string(f.Response.Echo))
			}
			continue
		}
		select {
		case events <- f.Event:
		case <-ctx.Done():
			return nil
		}
	}
}

// event handles one event.
func (a *Adapter) event(ctx context.Context, c *conn, ev *Event, beats chan<- time.Duration) {
	if c.learnSelf(string(ev.SelfID)) && c.canCall() {
		a.connected(bridge.User{ID: string(ev.SelfID)})
	}
	self := c.selfID()
	if ev.SelfID != "" && self != "" && string(ev.SelfID) != self {
		a.log.Debug("onebot: event for another account skipped", "self_id", ev.SelfID)
		return
	}
	switch ev.PostType {
	case "meta_event":
		if ev.MetaEventType == "heartbeat" {
			select {
			case beats <- time.Duration(ev.Interval) * time.Millisecond:
			default:
			}
		}
	case "message":
		if !c.canHear() {
			return
		}
		if self != "" && string(ev.UserID) == self {
			return // the bot's own message
		}
		a.sink.Inbound(ctx, toMessage(ev, a.fetch))
	}
}

// watchHeartbeat closes a connection whose heartbeats stop: once the
// implementation has announced an interval, a beat missing for twice that
// (and 5 s more) means the link is dead.
func (a *Adapter) watchHeartbeat(ctx context.Context, c *conn, beats <-chan time.Duration) {
	var interval time.Duration
	for {
		var timeout <-chan time.Time
		if interval > 0 {
			timeout = a.o.Clock.After(2*interval + 5*time.Second)
		}
		select {
		case d := <-beats:
			interval = d
		case <-timeout:
			a.log.Warn("onebot: no heartbeat; closing the connection", "interval", interval)
			c.close(websocket.StatusGoingAway, "no heartbeat", fmt.Errorf("no heartbeat for %s", 2*interval+5*time.Second))
			return
		case <-c.done:
			return
		case <-ctx.Done():
			return
		}
	}
}

func (a *Adapter) current() *conn {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.api
}

// Send implements bridge.Adapter with send_group_msg / send_private_msg.
func (a *Adapter) Send(ctx context.Context, chat bridge.Chat, m bridge.Outgoing) (string, error) {
	c := a.current()
	if c == nil {
		return "", bridge.ErrOffline
	}
	segs := toSegments(m)
	if len(segs) == 0 {
		return "", &bridge.SendError{Msg: "nothing to send"}
	}
	var msg any = segs
	if a.o.Format == "string" {
		msg = RenderCQ(segs)
	}
	action, params := "send_private_msg", map[string]any{"user_id": number(chat.ID), "message": msg}
	if chat.Kind == bridge.Group {
		action, params = "send_group_msg", map[string]any{"group_id": number(chat.ID), "message": msg}
	}
	resp, err := c.call(ctx, action, params, a.o.Timeout)
	switch {
	case errors.Is(err, errClosed):
		return "", bridge.ErrOffline
	case err != nil:
		return "", &bridge.SendError{Temporary: true, Msg: err.Error()}
	case resp.Status != "ok" && resp.Status != "async":
		return "", &bridge.SendError{Temporary: rateLimited(resp), TooLong: refusedLong(m, resp), Msg: failure(action, resp)}
	}
	var data struct {
		MessageID ID `json:"message_id"`
	}
	_ = json.Unmarshal(resp.Data, &data)
	return string(data.MessageID), nil
}

// Typing implements bridge.Adapter: NapCat's set_input_status in private
// chats; groups have no typing indicator in OneBot.
func (a *Adapter) Typing(ctx context.Context, chat bridge.Chat) error {
	a.mu.Lock()
	no := a.typingNo
	a.mu.Unlock()
	if chat.Kind != bridge.Private || no {
		return bridge.ErrUnsupported
	}
	c := a.current()
	if c == nil {
		return bridge.ErrOffline
	}
	resp, err := c.call(ctx, "set_input_status", map[string]any{"user_id": number(chat.ID), "event_type": 1}, a.o.Timeout)
	if err != nil {
		return err
	}
	if resp.Retcode == 1404 || resp.Status == "failed" && strings.Contains(strings.ToLower(resp.Message+resp.Wording), "not found") {
		a.mu.Lock()
		a.typingNo = true
		a.mu.Unlock()
		return bridge.ErrUnsupported
	}
	return nil
}

// number sends an id as a JSON number when it is one.
func number(id string) any {
	if n, err := strconv.ParseInt(id, 10, 64); err == nil {
		return n
	}
	return id
}

func failure(action string, r *Response) string {
	msg := fmt.Sprintf("%s failed (retcode %d)", action, r.Retcode)
	for _, s := range []string{r.Wording, r.Message} {
		if s != "" {
			return msg + ": " + s
		}
	}
	return msg
}

func rateLimited(r *Response) bool {
	s := strings.ToLower(r.Message + " " + r.Wording)
	return r.Retcode == 1429 || strings.Contains(s, "rate") || strings.Contains(s, "频繁") || strings.Contains(s, "timeout")
}

func clip(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
