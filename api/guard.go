package api

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Access is how the guard lets a path in. Whatever the access, the Origin
// rules hold on every path: a page of another origin is refused.
type Access int

const (
	// OwnerOnly needs the API token — the bearer header or the session
	// cookie — unless the daemon is on loopback. Every path not opened by
	// a Door is OwnerOnly.
	OwnerOnly Access = iota
	// Public needs no token: /healthz and the page's own files.
	Public
	// OwnAuth skips the API token because the route checks credentials of
	// its own (the OneBot reverse WebSocket's access_token, the session
	// door's token).
	OwnAuth
)

// Door gives one path, or every path below it when Path ends in "/", an
// Access other than OwnerOnly. The longest matching Path wins. The root
// "/" is one path, the page's index: a door below it would open every
// route. A route with credentials of its own opens its door in
// Options.Doors:
//
//	api.Options{…, Doors: []api.Door{{Path: "/onebot/v11/ws", Access: api.OwnAuth}}}
type Door struct {
	Path   string
	Access Access
}

// builtinDoors are the doors every server has.
func builtinDoors() []Door {
	return []Door{{Path: "/healthz", Access: Public}, {Path: SessionPath, Access: OwnAuth}}
}

// SessionPath is where the page trades the token for the session cookie.
const SessionPath = "/api/v1/session"

// SessionCookie is the cookie the page authenticates with.
const SessionCookie = "cyan_session"

// sessionMaxAge is how long the session cookie lasts in the browser.
const sessionMaxAge = 30 * 24 * time.Hour

// access returns the Access of a path.
func (s *Server) access(path string) Access {
	best, acc := -1, OwnerOnly
	for _, d := range s.doors {
		ok := path == d.Path || (d.Path != "/" && strings.HasSuffix(d.Path, "/") && strings.HasPrefix(path, d.Path))
		if ok && len(d.Path) > best {
			best, acc = len(d.Path), d.Access
		}
	}
	return acc
}

// guard applies every check before a request reaches its route: the Host
// (DNS rebinding), the Origin (no other web page acts as the owner), the
// content type of state-changing requests (a form or a text/plain fetch
// cannot pass as JSON), the token, the body's size and its read deadline.
// It returns false when it answered the request itself.
func (s *Server) guard(w http.ResponseWriter, r *http.Request) bool {
	if s.o.CheckHost && !s.hostAllowed(r.Host) {
		writeError(w, http.StatusForbidden, "forbidden_host",
			fmt.Sprintf("host %q is not allowed; use http://127.0.0.1 or add the name to api.allowed_hosts", r.Host))
		return false
	}
	acc := s.access(r.URL.Path)
	origin, cors, err := s.checkOrigin(r, acc)
	if err != nil {
		s.log.Warn("refused a request from another origin", "path", r.URL.Path, "origin", origin, "site", r.Header.Get("Sec-Fetch-Site"))
		writeError(w, http.StatusForbidden, "forbidden_origin", err.Error())
		return false
	}
	if cors {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Add("Vary", "Origin")
		if r.Method == http.MethodOptions {
			h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Last-Event-ID, "+ChannelHeader)
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return false
		}
	}
	if changesState(r.Method) && !isJSON(r.Header.Get("Content-Type")) {
		writeError(w, http.StatusUnsupportedMediaType, "unsupported_media_type",
			fmt.Sprintf("%s %s needs \"Content-Type: application/json\" (got %q); send the body as JSON", r.Method, r.URL.Path, r.Header.Get("Content-Type")))
		return false
	}
	if s.o.Token != "" && acc == OwnerOnly && !s.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="cyan"`)
		writeError(w, http.StatusUnauthorized, "unauthorized",
			"missing or wrong bearer token; send \"Authorization: Bearer <token>\" with the token from the api-token file in the data dir (a page signs in at POST "+SessionPath+")")
		return false
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.o.MaxBodyBytes)
	return true
}

// changesState reports whether a method may change something: every method
// but GET, HEAD and the CORS preflight.
func changesState(method string) bool {
	return method != http.MethodGet && method != http.MethodHead && method != http.MethodOptions
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}

// checkOrigin refuses what a browser sends on behalf of a page that is not
// the daemon's own or allowed: an Origin header naming another origin
// (fetch, forms and WebSocket upgrades carry it), or Sec-Fetch-Site
// saying the request comes from another site without an allowed Origin
// (a no-cors GET, an <img>, a link). A top-level navigation to a Public
// path (someone follows a link to the page) is let in: it carries no
// cookie (SameSite=Strict) and runs nothing. Requests without either
// header (the CLI, curl, bridges) pass. cors is true when the origin is
// one of AllowedOrigins, so the answer needs CORS headers.
func (s *Server) checkOrigin(r *http.Request, acc Access) (origin string, cors bool, err error) {
	origins := r.Header.Values("Origin")
	site := strings.ToLower(r.Header.Get("Sec-Fetch-Site"))
	if len(origins) > 1 {
		return strings.Join(origins, ", "), false, fmt.Errorf("%d Origin headers; send one", len(origins))
	}
	if len(origins) == 1 {
		origin = origins[0]
		switch {
		case sameOrigin(origin, ownOrigin(r)):
			return origin, false, nil
		case slices.ContainsFunc(s.o.AllowedOrigins, func(a string) bool { return sameOrigin(origin, a) }):
			return origin, true, nil
		}
		return origin, false, fmt.Errorf("requests from pages of %s are refused: only the daemon's own page (%s) and api.allowed_origins may call the API from a browser", origin, ownOrigin(r))
	}
	switch site {
	case "", "same-origin", "none":
		return "", false, nil
	}
	if acc == Public && r.Method == http.MethodGet && r.Header.Get("Sec-Fetch-Mode") == "navigate" {
		return "", false, nil
	}
	return "", false, fmt.Errorf("a %s request from another page is refused (Sec-Fetch-Site: %s); open the daemon's own page, or call the API without a browser", r.Method, site)
}

// ownOrigin is the origin of the daemon as this request reached it.
func ownOrigin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// sameOrigin compares two origins by scheme, host and port, with the
// scheme's default port filled in.
func sameOrigin(a, b string) bool {
	na, oka := normOrigin(a)
	nb, okb := normOrigin(b)
	return oka && okb && na == nb
}

func normOrigin(o string) (string, bool) {
	u, err := url.Parse(strings.TrimSuffix(strings.TrimSpace(o), "/"))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || u.Path != "" || u.User != nil {
		return "", false
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return u.Scheme + "://" + net.JoinHostPort(strings.ToLower(host), port), true
}

// authorized accepts the bearer token (the scheme in any case) or the
// session cookie.
func (s *Server) authorized(r *http.Request) bool {
	if f := strings.Fields(r.Header.Get("Authorization")); len(f) == 2 && strings.EqualFold(f[0], "bearer") {
		if subtle.ConstantTimeCompare([]byte(f[1]), []byte(s.o.Token)) == 1 {
			return true
		}
	}
	for _, c := range r.CookiesNamed(SessionCookie) {
		if subtle.ConstantTimeCompare([]byte(c.Value), []byte(s.session)) == 1 {
			return true
		}
	}
	return false
}

// sessionValue is the session cookie's value for a token: derived from it,
// so a new token ends every session and a restart keeps them.
func sessionValue(token string) string {
	if token == "" {
		return ""
	}
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("cyan_session/v1"))
	return hex.EncodeToString(m.Sum(nil))
}

// sessionState is the answer of the session door.
type sessionState struct {
	TokenRequired bool `json:"token_required"`
	Authenticated bool `json:"authenticated"`
}

func (s *Server) sessionNow(r *http.Request) sessionState {
	return sessionState{TokenRequired: s.o.Token != "", Authenticated: s.o.Token == "" || s.authorized(r)}
}

// getSession tells the page whether it must ask for the token.
func (s *Server) getSession(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.sessionNow(r))
}

// postSession trades the token for the session cookie.
func (s *Server) postSession(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Token string `json:"token"`
	}
	if !decodeBody(w, r, &req) {
		return
	}
	if s.o.Token == "" {
		writeJSON(w, http.StatusOK, sessionState{Authenticated: true})
		return
	}
	if subtle.ConstantTimeCompare([]byte(strings.TrimSpace(req.Token)), []byte(s.o.Token)) != 1 {
		writeError(w, http.StatusUnauthorized, "unauthorized", "wrong token; copy it from the api-token file in the daemon's data dir")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: s.session, Path: "/", HttpOnly: true, Secure: r.TLS != nil,
		SameSite: http.SameSiteStrictMode, MaxAge: int(sessionMaxAge / time.Second)})
	writeJSON(w, http.StatusOK, sessionState{TokenRequired: true, Authenticated: true})
}

// deleteSession signs the page out.
func (s *Server) deleteSession(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: "", Path: "/", HttpOnly: true, Secure: r.TLS != nil,
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
	writeJSON(w, http.StatusOK, sessionState{TokenRequired: s.o.Token != ""})
}

// Timeouts are the HTTP server's limits on slow clients.
type Timeouts struct {
	// ReadHeader bounds reading a request's headers (api.read_header_timeout),
	// Read the whole request, body included (api.read_timeout), Idle an
	// idle keep-alive connection (api.idle_timeout). A body that is late is
	// answered 408 and the connection closed. The read deadline ends once
	// the body is read (net/http clears it when its background read
	// starts), so a long or streamed answer is not cut by it; nothing
	// bounds writing, for the same reason.
	ReadHeader, Read, Idle time.Duration
}

// HTTPServer is the http.Server for a handler with these timeouts (the
// daemon sets its context and log).
func HTTPServer(h http.Handler, t Timeouts) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: t.ReadHeader, ReadTimeout: t.Read, IdleTimeout: t.Idle}
}
