package onebot

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"
)

// ReversePath is where implementations connect in reverse mode;
// ReversePath + "/<bridge name>" picks one bridge by name. A trailing
// slash, and a "/api" or "/event" suffix (Lagrange.OneBot's separate API
// and Event clients), are accepted on either.
const ReversePath = "/onebot/v11/ws"

// ReverseMux serves the reverse WebSocket of every reverse-mode adapter:
// it refuses browsers (any Origin header), finds the adapter by the access
// token the implementation sends (Authorization: Bearer, or
// ?access_token=) or by the path's name — of bridges that share both, the
// one whose self_id is the X-Self-ID — checks X-Self-ID and
// X-Client-Role, and hands the connection over. A second account on a
// bridge that serves one is refused (HTTP 409), never swapped in: the two
// implementations would knock each other off for ever.
type ReverseMux struct {
	named map[string]*Adapter
	all   []*Adapter
	log   *slog.Logger
}

// NewReverseMux serves the given adapters (by bridge name).
func NewReverseMux(log *slog.Logger, adapters map[string]*Adapter) *ReverseMux {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &ReverseMux{named: map[string]*Adapter{}, log: log}
	for name, a := range adapters {
		m.named[name] = a
		m.all = append(m.all, a)
	}
	return m
}

// token is the access token of a request.
func token(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if scheme, t, ok := strings.Cut(h, " "); ok && (strings.EqualFold(scheme, "Bearer") || strings.EqualFold(scheme, "Token")) {
		return strings.TrimSpace(t)
	}
	return r.URL.Query().Get("access_token")
}

// nameOf reads the bridge name from a reverse path: ReversePath, with a
// trailing slash or not, and Lagrange.OneBot's ApiSuffix / EventSuffix
// ("/api", "/event", which its non-universal clients append) accepted
// after it or after a name (Lagrange.OneBot's ReverseWSServiceOptions.cs at
// commit e17fe35641d3a1dc9955566fa875232551224441). ok is false when no
// name is given.
func (m *ReverseMux) nameOf(path string) (string, bool) {
	rest, _ := strings.CutPrefix(path, ReversePath)
	rest = strings.Trim(rest, "/")
	if rest == "" {
		return "", false
	}
	if _, named := m.named[rest]; !named {
		for _, suffix := range []string{"api", "event"} {
			if rest == suffix {
				return "", false
			}
			if n, ok := strings.CutSuffix(rest, "/"+suffix); ok {
				rest = strings.Trim(n, "/")
				break
			}
		}
	}
	return rest, rest != ""
}

func sameToken(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

func (m *ReverseMux) refuse(w http.ResponseWriter, r *http.Request, status int, why string) {
	m.log.Warn("onebot: refused a reverse WebSocket connection", "from", r.RemoteAddr, "why", why)
	http.Error(w, "onebot: "+why, status)
}

// ServeHTTP implements http.Handler.
func (m *ReverseMux) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if o := r.Header.Get("Origin"); o != "" {
		m.refuse(w, r, http.StatusForbidden, fmt.Sprintf("a browser page (Origin %s) may not connect; only a OneBot implementation may", o))
		return
	}
	tok := token(r)
	var a *Adapter
	if name, ok := m.nameOf(r.URL.Path); ok {
		a = m.named[name]
		if a == nil {
			m.refuse(w, r, http.StatusNotFound, fmt.Sprintf("no reverse-mode bridge is named %q", name))
			return
		}
		if !sameToken(tok, a.o.AccessToken) {
			a = nil
		}
	} else {
		// Several bridges may share the path and the token: the one
		// configured for the connecting account (self_id = X-Self-ID)
		// serves it, else one configured for any account.
		self := strings.TrimSpace(r.Header.Get("X-Self-ID"))
		for _, c := range m.all {
			if !sameToken(tok, c.o.AccessToken) {
				continue
			}
			switch {
			case c.o.SelfID != "" && c.o.SelfID == self:
				a = c
			case c.o.SelfID == "" && (a == nil || a.o.SelfID != self):
				a = c
			}
			if a != nil && a.o.SelfID == self && self != "" {
				break
			}
		}
	}
	if a == nil {
		why := "wrong access token: set the same access_token in the implementation's reverse WebSocket settings and in bridges.onebot[].access_token"
		status := http.StatusForbidden
		if tok == "" {
			why, status = "missing access token: the implementation must send Authorization: Bearer <access_token> (set its token to bridges.onebot[].access_token)", http.StatusUnauthorized
		}
		m.refuse(w, r, status, why)
		for _, c := range m.all {
			c.sinkProblem(fmt.Errorf("refused a connection from %s: %s", r.RemoteAddr, why))
		}
		return
	}
	self := strings.TrimSpace(r.Header.Get("X-Self-ID"))
	if a.o.SelfID != "" && self != a.o.SelfID {
		m.refuse(w, r, http.StatusForbidden, fmt.Sprintf("X-Self-ID %q is not the configured self_id %s", self, a.o.SelfID))
		return
	}
	role := r.Header.Get("X-Client-Role")
	switch {
	case role == "" || strings.EqualFold(role, RoleUniversal):
		role = RoleUniversal
	case strings.EqualFold(role, RoleEvent):
		role = RoleEvent
	case strings.EqualFold(role, RoleAPI):
		role = RoleAPI
	default:
		m.refuse(w, r, http.StatusBadRequest, fmt.Sprintf("X-Client-Role %q is not Universal, Event or API", role))
		return
	}
	select {
	case <-a.started:
	case <-a.o.Clock.After(5 * time.Second):
	case <-r.Context().Done():
	}
	a.mu.Lock()
	ctx := a.ctx
	var serving string
	if cur := a.api; cur != nil && ctx != nil && !cur.closed() {
		serving = cur.selfID()
	}
	if ctx != nil && (serving == "" || self == "" || serving == self) {
		a.conns.Add(1)
	}
	a.mu.Unlock()
	if ctx != nil && serving != "" && self != "" && serving != self {
		// A second account on one bridge: serving it would close the first
		// connection, whose implementation reconnects and closes this one
		// — the two knock each other off for ever. The first stays.
		why := fmt.Sprintf("bridge %s already serves QQ account %s; account %s was refused: give it a bridge of its own "+
			"(a bridges.onebot entry with self_id: %s, its implementation connecting to %s/<that bridge's name>)", a.o.Name, serving, self, self, ReversePath)
		m.refuse(w, r, http.StatusConflict, why)
		a.sinkProblem(errors.New(why))
		return
	}
	if ctx == nil {
		m.refuse(w, r, http.StatusServiceUnavailable, "the bridge is not running")
		return
	}
	// The server's read and write deadlines bound a request, not a
	// connection that lives for days: clear them before the upgrade (they
	// stay on the connection after it is hijacked).
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		a.conns.Done()
		m.log.Warn("onebot: WebSocket upgrade failed", "from", r.RemoteAddr, "err", err)
		return
	}
	a.log.Info("onebot: the implementation connected", "from", r.RemoteAddr, "self_id", self, "role", role)
	a.serve(ctx, newConn(ws, role, self))
}

func (a *Adapter) sinkProblem(err error) {
	a.mu.Lock()
	s := a.sink
	a.mu.Unlock()
	if s != nil {
		s.Problem(err)
	}
}
