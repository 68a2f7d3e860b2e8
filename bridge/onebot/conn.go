package onebot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// Client roles of a reverse connection (X-Client-Role).
const (
	RoleUniversal = "Universal"
	RoleEvent     = "Event"
	RoleAPI       = "API"
)

// MaxFrameBytes bounds one incoming frame.
const MaxFrameBytes = 8 << 20

// errClosed is a call on a connection that ended.
var errClosed = errors.New("onebot: connection closed")

// conn is one WebSocket connection to the implementation: it reads events
// and responses, and matches each API call's response by its echo.
type conn struct {
	ws   *websocket.Conn
	role string
	self string // X-Self-ID, or learned from events

	echo    atomic.Uint64
	mu      sync.Mutex
	pending map[string]chan *Response
	done    chan struct{}
	err     error // why it ended, once done is closed
	once    sync.Once

	// Health, kept by the read loop: when the last frame of any kind
	// arrived (the connection's own silence is all the heartbeat watch
	// looks at), the heartbeat interval announced, and whether the
	// connection proved healthy (get_login_info answered and a heartbeat
	// seen), which alone resets the forward dialer's schedule (redial) and
	// is told to the supervisor (supervise.Healthy) once (proved).
	lastFrame atomic.Int64 // unix nanoseconds, on the adapter's clock
	interval  atomic.Int64 // nanoseconds; 0 until a heartbeat says
	beat      chan struct{}
	loggedIn  atomic.Bool
	beatSeen  atomic.Bool
	proved    atomic.Bool
	offline   atomic.Int32 // accountOK, offlineByNotice or offlineByHeartbeat
}

func newConn(ws *websocket.Conn, role, self string) *conn {
	ws.SetReadLimit(MaxFrameBytes)
	return &conn{ws: ws, role: role, self: self, pending: map[string]chan *Response{}, done: make(chan struct{}), beat: make(chan struct{}, 1)}
}

// selfID is the bot's account on this connection ("" until known).
func (c *conn) selfID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.self
}

// learnSelf sets the bot's account if it was not known; it reports
// whether it was set now.
func (c *conn) learnSelf(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.self != "" || id == "" {
		return false
	}
	c.self = id
	return true
}

// canCall reports whether API calls may be sent on this connection.
func (c *conn) canCall() bool { return c.role != RoleEvent }

// canHear reports whether events arrive on this connection.
func (c *conn) canHear() bool { return c.role != RoleAPI }

// close ends the connection once, with a reason.
func (c *conn) close(code websocket.StatusCode, reason string, err error) {
	c.once.Do(func() {
		c.mu.Lock()
		c.err = err
		c.mu.Unlock()
		close(c.done)
		_ = c.ws.Close(code, reason)
	})
}

func (c *conn) reason() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// request is an API call as sent.
type request struct {
	Action string `json:"action"`
	Params any    `json:"params,omitempty"`
	Echo   string `json:"echo"`
}

// call sends an API call and waits for its response, at most timeout.
func (c *conn) call(ctx context.Context, action string, params any, timeout time.Duration) (*Response, error) {
	echo := "cyan-" + strconv.FormatUint(c.echo.Add(1), 10)
	ch := make(chan *Response, 1)
	c.mu.Lock()
	c.pending[echo] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, echo)
		c.mu.Unlock()
	}()
	b, err := json.Marshal(request{Action: action, Params: params, Echo: echo})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := c.ws.Write(ctx, websocket.MessageText, b); err != nil {
		select {
		case <-c.done:
			return nil, errClosed
		default:
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s: no answer in %s", action, timeout)
		}
		c.close(websocket.StatusInternalError, "write failed", err)
		return nil, errClosed
	}
	select {
	case r := <-ch:
		return r, nil
	case <-c.done:
		return nil, errLost
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w in %s", action, errNoAnswer, timeout)
	}
}

// deliver hands a response to the call waiting for its echo.
func (c *conn) deliver(r *Response) bool {
	var echo string
	if err := json.Unmarshal(r.Echo, &echo); err != nil {
		echo = string(r.Echo)
	}
	c.mu.Lock()
	ch, ok := c.pending[echo]
	c.mu.Unlock()
	if ok {
		ch <- r
	}
	return ok
}

// read returns the next text frame.
func (c *conn) read(ctx context.Context) ([]byte, error) {
	for {
		typ, b, err := c.ws.Read(ctx)
		if err != nil {
			return nil, err
		}
		if typ == websocket.MessageText || typ == websocket.MessageBinary {
			return b, nil
		}
	}
}

// heard notes a frame's arrival.
func (c *conn) heard(now time.Time) { c.lastFrame.Store(now.UnixNano()) }

// heartbeat notes a heartbeat and its interval, waking the watch.
func (c *conn) heartbeat(interval time.Duration) {
	c.beatSeen.Store(true)
	if interval > 0 && c.interval.Swap(int64(interval)) != int64(interval) {
		select {
		case c.beat <- struct{}{}:
		default:
		}
	}
}

// healthy reports whether the connection proved itself: the login query
// answered and a heartbeat seen.
func (c *conn) healthy() bool { return c.loggedIn.Load() && c.beatSeen.Load() }

// closed reports whether the connection has ended.
func (c *conn) closed() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}
