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
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/cyan-agent/cyan/bridge"
	"github.com/cyan-agent/cyan/clock"
	"github.com/cyan-agent/cyan/supervise"
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
	Clock      clock.Clock
	HTTPClient *http.Client // forward-mode dials; nil: a default
	Logger     *slog.Logger
	// Media decides where the images an event names may be downloaded
	// from (bridge.FetchPolicy documents the rules). nil: the production
	// policy, trusting the forward URL's origin and MediaOrigins.
	Media *bridge.FetchPolicy
	// MediaOrigins are origins ("host:port") the implementation serves
	// its own files from, trusted on loopback and private addresses.
	MediaOrigins []string
	// Own is the daemon's listen address, never fetched.
	Own string
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
	attempts atomic.Int64 // the forward dialer's attempts
	redial   *redial      // what the forward dialer learned
	// started is closed once Run has begun: a reverse connection that
	// arrives while the daemon is still starting waits for it.
	started chan struct{}
	start   sync.Once
	// sendTimeout bounds a send call: o.Timeout. The delivery tests
	// shorten it alone, scaled with the implementation's own wait for QQ,
	// and leave the other calls (the history lookups) a bound that no
	// load of the test machine reaches.
	sendTimeout time.Duration
	// sending counts the sends under way, their lookups included (dial).
	sending atomic.Int32
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
		o.Clock = clock.Real{}
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Media == nil {
		o.Media = &bridge.FetchPolicy{Trusted: mediaOrigins(o), Own: o.Own}
	}
	return &Adapter{o: o, log: o.Logger, fetch: policyFetch(o.Media), redial: newRedial(o.Reconnect), started: make(chan struct{}),
		sendTimeout: o.Timeout}, nil
}

// mediaOrigins are the origins trusted with loopback and private
// addresses: the forward URL's host:port (the implementation itself) and
// the configured ones.
func mediaOrigins(o Options) []string {
	out := append([]string(nil), o.MediaOrigins...)
	if o.Mode == "forward" {
		out = append(out, o.URL)
	}
	return out
}

// PushesWithoutAck implements bridge.Pusher: OneBot pushes events and
// never hears whether they were taken, so a message whose media is slow
// is stored when its media arrives (or its time runs out) without holding
// up the events after it.
func (a *Adapter) PushesWithoutAck() bool { return true }

// Platform implements bridge.Adapter.
func (a *Adapter) Platform() string { return "onebot" }

// VoiceFormat is the format of a voice message's record: WAV, which the
// three implementations take inline ("base64://") and turn into QQ's
// SILK themselves — NapCat with its ffmpeg (encodeSilk: any file that is
// not SILK goes through FFmpegService.convertToNTSilkTct;
// NapNeko/NapCatQQ packages/napcat-core/helper/audio.ts, commit
// e070ef670b6ec614bed239306dae2b401e15556f), LLOneBot likewise with its
// ffmpeg, Lagrange.OneBot with its own WAV decoder and SILK encoder (RecordSegment.ConvertFormat:
// AMR, SILK, MP3 and WAV only; anything else fails "Encode failed";
// LagrangeDev/Lagrange.Core Lagrange.OneBot/Message/Entity/RecordSegment.cs,
// commit 11f3995f7f335d646b5ae0ec7f5b31ecda49dfff).
func (a *Adapter) VoiceFormat() string { return "audio/wav" }

// Mode is "reverse" or "forward".
func (a *Adapter) Mode() string { return a.o.Mode }

// Run implements bridge.Adapter: in forward mode it makes one connection
// attempt and serves the connection until it ends (dial; the supervisor
// makes the next attempt when the dialer says; a second at once when the
// connection ended under a send); in reverse mode it serves
// the connections the ReverseMux hands it until ctx ends.
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
	return a.dial(ctx)
}

// dial makes one connection attempt to the implementation and serves the
// connection until it ends. It returns nil when ctx ends, else why the
// attempt or the connection ended, marked with the wait the dialer learned
// (redial, supervise.RetryAfter): the supervisor, which runs the bridge,
// makes the next attempt. A refused token (an HTTP 401/403, NapCat's 1403
// frame, quick closes in a row) is a bridge.AuthError naming the setting,
// also reported to the sink.
//
// One exception: when the connection ends while a send waits for its
// answer, dial attempts once more at once, within this Run. That send's
// outcome is looked up in the chat over the next connection (unconfirmed),
// and the supervisor's next attempt would come only after the bridge's
// outbox — that very send — gave up: the message would stay "outcome
// unknown", never sent again even when it was not posted.
func (a *Adapter) dial(ctx context.Context) error {
	for again := true; ; again = false {
		wait, connected, end := a.attempt(ctx)
		if end == nil {
			return nil
		}
		if again && connected && a.sending.Load() > 0 && !bridge.IsAuth(end) {
			a.log.Info("onebot: the connection ended while a send waited for its answer; connecting again now to look for it in the chat", "err", end)
			continue
		}
		return supervise.RetryAfter(end, wait)
	}
}

// attempt makes one connection attempt and serves the connection until it
// ends: the wait before the next attempt, whether it connected, and why it
// ended (nil when ctx ended).
func (a *Adapter) attempt(ctx context.Context) (wait time.Duration, connected bool, end error) {
	hdr := http.Header{}
	if a.o.AccessToken != "" {
		hdr.Set("Authorization", "Bearer "+a.o.AccessToken)
	}
	a.attempts.Add(1)
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	ws, resp, err := websocket.Dial(dctx, a.o.URL, &websocket.DialOptions{HTTPClient: a.o.HTTPClient, HTTPHeader: hdr})
	cancel()
	if ctx.Err() != nil {
		return 0, false, nil
	}
	var failure error
	healthy := false
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		switch status {
		case http.StatusUnauthorized, http.StatusForbidden:
			failure = a.authError(fmt.Sprintf("the implementation at %s refused the access token (HTTP %d)", a.o.URL, status))
		default:
			failure = fmt.Errorf("cannot connect to %s: %w", a.o.URL, err)
		}
	} else {
		began := a.o.Clock.Now()
		c := newConn(ws, RoleUniversal, "")
		a.conns.Add(1)
		connected = true
		end = a.serve(ctx, c)
		if ctx.Err() != nil {
			return 0, true, nil
		}
		healthy = c.healthy()
		switch {
		case bridge.IsAuth(end):
			failure = end
		case c.loggedIn.Load():
			a.redial.loggedIn()
		case a.o.Clock.Now().Sub(began) < quickClose:
			if n, refused := a.redial.closedQuickly(); refused {
				failure = a.authError(fmt.Sprintf("the implementation at %s closed each of the last %d connections within seconds, before answering", a.o.URL, n))
			}
		}
	}
	wait = a.redial.after(healthy, bridge.IsAuth(failure))
	if failure != nil {
		a.sink.Problem(failure)
		end = failure
	}
	if end == nil {
		end = errors.New("the connection ended")
	}
	return wait, connected, end
}

// authError is a refused access token, with the setting to correct.
func (a *Adapter) authError(why string) error {
	return &bridge.AuthError{Setting: "wrong access_token", Why: why,
		Fix: "set bridges.onebot[].access_token (bridge " + a.o.Name + ") to the token of the implementation's WebSocket server (NapCat and LLOneBot: its token setting; Lagrange.OneBot: AccessToken)"}
}

// Attempts is how many forward connections were tried so far.
func (a *Adapter) Attempts() int64 { return a.attempts.Load() }

// serve runs one connection until it ends: its read loop, its heartbeat
// watch, and the login query that tells who the bot is. It returns why the
// connection ended.
func (a *Adapter) serve(ctx context.Context, c *conn) error {
	defer a.conns.Done()
	outer := ctx // cyan stopping, not this connection ending
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c.heard(a.o.Clock.Now())
	a.mu.Lock()
	if c.canCall() {
		if old := a.api; old != nil {
			old.close(websocket.StatusPolicyViolation, "replaced by a new connection", errors.New("replaced by a new connection"))
		}
		a.api = c
	}
	a.mu.Unlock()
	var side sync.WaitGroup
	if c.canCall() {
		// a new connection: whatever the last said of the account, its
		// heartbeats and notices tell anew (the old one's end may never
		// be reported when this one replaced it)
		if w, ok := a.sink.(bridge.AccountWatcher); ok {
			w.AccountOnline()
		}
		if self := c.selfID(); self != "" {
			a.connected(bridge.User{ID: self})
		}
		side.Add(1)
		go func() {
			defer side.Done()
			a.safely("login", func() { a.login(ctx, c) })
		}()
	}
	side.Add(1)
	go func() {
		defer side.Done()
		a.safely("heartbeat watch", func() { a.watchHeartbeat(ctx, c) })
	}()
	err := a.readLoop(ctx, c, &side)
	c.close(websocket.StatusNormalClosure, "", err)
	cancel()
	defer side.Wait() // after the report: a handler still busy does not hold it up
	a.mu.Lock()
	current := a.api == c
	if current {
		a.api = nil
	}
	a.mu.Unlock()
	if r := c.reason(); r != nil && outer.Err() == nil {
		err = r
	}
	if current {
		report := err
		if outer.Err() != nil && !bridge.IsAuth(err) {
			report = nil
		}
		a.sink.Disconnected(report)
	}
	return err
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
	c.loggedIn.Store(true)
	a.proveHealthy(ctx, c)
	var info struct {
		UserID   ID     `json:"user_id"`
		Nickname string `json:"nickname"`
	}
	if json.Unmarshal(resp.Data, &info) == nil && info.UserID != "" {
		c.learnSelf(string(info.UserID))
		a.connected(bridge.User{ID: string(info.UserID), Name: info.Nickname})
	}
}

// proveHealthy tells the supervisor, once per connection, that the bridge
// is healthy when the connection has proved itself (get_login_info
// answered and a heartbeat seen): its last error is cleared and its next
// failure starts the backoff over.
func (a *Adapter) proveHealthy(ctx context.Context, c *conn) {
	if c.healthy() && c.proved.CompareAndSwap(false, true) {
		supervise.Healthy(ctx)
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
// logged and skipped. Nothing it does waits on anything but the socket:
// responses are matched and meta events (heartbeat, lifecycle) handled at
// once, here; messages and notices go to a queue of their own, handled in
// order by one goroutine, which never waits on media (the bridge fetches
// it off that path). The queue grows as needed, so a slow store never
// stops the reading, and the heartbeat watch sees only the connection's
// own silence. The event goroutine is joined through side.
func (a *Adapter) readLoop(ctx context.Context, c *conn, side *sync.WaitGroup) error {
	q := newEventQueue()
	defer q.close()
	side.Add(1)
	go func() {
		defer side.Done()
		for {
			ev, ok := q.pop(ctx)
			if !ok {
				return
			}
			a.safely("event", func() { a.event(ctx, c, ev) })
		}
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
		c.heard(a.o.Clock.Now())
		f, err := ParseFrame(b)
		if err != nil {
			a.log.Warn("onebot: malformed frame skipped", "err", err, "frame", clip(b, 200))
			a.sink.Problem(fmt.Errorf("a malformed frame was skipped: %w", err))
			continue
		}
		if r := f.Response; r != nil {
			if c.deliver(r) {
				continue
			}
			if r.Retcode == 1403 && (len(r.Echo) == 0 || string(r.Echo) == "null") {
				// NapCat's and LLOneBot's WebSocket server, on a wrong
				// token: {"status":"failed","retcode":1403,"message":
				// "token验证失败"}, then close.
				err := a.authError(fmt.Sprintf("the implementation answered retcode 1403 %q and closed", firstOf(r.Message, r.Wording, "forbidden")))
				c.close(websocket.StatusPolicyViolation, "wrong access token", err)
				return err
			}
			a.log.Debug("onebot: a response nobody waits for", "echo", string(r.Echo))
			continue
		}
		if f.Event.PostType == "meta_event" {
			a.safely("meta event", func() { a.meta(ctx, c, f.Event) })
			continue
		}
		q.push(f.Event)
	}
}

// meta handles a meta event in the read loop: a heartbeat feeds the watch;
// a lifecycle event is logged. Either tells the bot's id.
func (a *Adapter) meta(ctx context.Context, c *conn, ev *Event) {
	if c.learnSelf(string(ev.SelfID)) && c.canCall() {
		a.connected(bridge.User{ID: string(ev.SelfID)})
	}
	if self := c.selfID(); ev.SelfID != "" && self != "" && string(ev.SelfID) != self {
		return
	}
	switch ev.MetaEventType {
	case "heartbeat":
		c.heartbeat(time.Duration(ev.Interval) * time.Millisecond)
		a.proveHealthy(ctx, c)
		a.accountState(c, ev.Status)
	case "lifecycle":
		a.log.Debug("onebot: lifecycle", "sub_type", ev.SubType)
	}
}

// event handles one message or notice event.
func (a *Adapter) event(ctx context.Context, c *conn, ev *Event) {
	if c.learnSelf(string(ev.SelfID)) && c.canCall() {
		a.connected(bridge.User{ID: string(ev.SelfID)})
	}
	self := c.selfID()
	if ev.SelfID != "" && self != "" && string(ev.SelfID) != self {
		a.log.Debug("onebot: event for another account skipped", "self_id", ev.SelfID)
		return
	}
	if !c.canHear() {
		return
	}
	switch ev.PostType {
	case "message":
		if self != "" && string(ev.UserID) == self {
			return // the bot's own message
		}
		a.sink.Inbound(ctx, toMessageWith(ev, a.fetch, func(id string) []node { return a.forward(ctx, c, id) }))
	case "notice":
		if ev.NoticeType == "bot_offline" {
			c.offline.CompareAndSwap(accountOK, offlineByNotice)
		}
		a.notice(ctx, ev, self)
	}
}

// watchHeartbeat closes a connection gone silent: once the implementation
// has announced a heartbeat interval, no frame of any kind for twice that
// (and 5 s more) means the link is dead. It reads only the time of the
// connection's last frame, which the read loop sets as frames arrive, so
// no work on any event can make a live link look dead.
func (a *Adapter) watchHeartbeat(ctx context.Context, c *conn) {
	for {
		var timeout <-chan time.Time
		if iv := time.Duration(c.interval.Load()); iv > 0 {
			limit := 2*iv + 5*time.Second
			silent := a.o.Clock.Now().Sub(time.Unix(0, c.lastFrame.Load()))
			if silent >= limit {
				a.log.Warn("onebot: no heartbeat; closing the connection", "interval", iv, "silent", silent)
				c.close(websocket.StatusGoingAway, "no heartbeat", fmt.Errorf("no heartbeat or other frame for %s", silent.Round(time.Second)))
				return
			}
			timeout = a.o.Clock.After(limit - silent)
		}
		select {
		case <-c.beat:
		case <-timeout:
		case <-c.done:
			return
		case <-ctx.Done():
			return
		}
	}
}

// running reports whether Run is running (a connection may come).
func (a *Adapter) running() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.ctx != nil
}

// current is the connection calls go over (nil: none).
func (a *Adapter) current() *conn {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.api
}

// Send implements bridge.Adapter with send_group_msg / send_private_msg.
func (a *Adapter) Send(ctx context.Context, chat bridge.Chat, m bridge.Outgoing) (string, error) {
	a.sending.Add(1)
	defer a.sending.Add(-1)
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
	began := a.o.Clock.Now()
	resp, err := c.call(ctx, action, params, a.sendTimeout)
	switch {
	case errors.Is(err, errLost), errors.Is(err, errNoAnswer):
		// written, then no answer: look before sending again
		return a.unconfirmed(ctx, chat, segs, began, fmt.Sprintf("%s: %v", action, err))
	case errors.Is(err, errClosed):
		return "", bridge.ErrOffline
	case err != nil:
		return "", &bridge.SendError{Temporary: true, Msg: err.Error()}
	case resp.Status != "ok" && resp.Status != "async":
		switch {
		case replyRefused(segs, resp):
			return "", &bridge.SendError{ReplyRefused: true, Msg: failure(action, resp)}
		case kernelTimeout(resp):
			return a.unconfirmed(ctx, chat, segs, began, failure(action, resp))
		case chat.Kind == bridge.Group && mutedRefusal(resp):
			until, _ := a.mutedUntil(ctx, c, chat)
			return "", &bridge.SendError{Muted: true, Until: until, Msg: failure(action, resp)}
		}
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

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
