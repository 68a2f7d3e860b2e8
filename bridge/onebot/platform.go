package onebot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/cyan-agent/cyan/bridge"
	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/registry"
)

// This file is the platform's whole declaration (package registry): its
// section bridges.onebot, its defaults and checks, how its bridges are
// built, its doctor check and which of its errors a restart cannot mend.

func init() {
	registry.RegisterPlatform(registry.Platform{Key: "onebot",
		About: "QQ through OneBot v11 (NapCat, LLOneBot, Lagrange.OneBot), reverse or forward WebSocket",
		New:   func() registry.Section { return new(Section) }})
}

// Section is bridges.onebot: the OneBot v11 connections.
type Section []Config

var _ bridge.Platform = (*Section)(nil)

// Config is one OneBot v11 connection (NapCat, LLOneBot, Lagrange).
type Config struct {
	Name string `yaml:"name"`
	// Mode is reverse (the implementation connects to cyan at
	// /onebot/v11/ws) or forward (cyan connects to URL).
	Mode string `yaml:"mode"`
	// URL is the implementation's WebSocket server (forward mode only).
	URL string `yaml:"url"`
	// AccessToken is required of the implementation (reverse) or sent to
	// it (forward), as "Authorization: Bearer" or ?access_token=.
	AccessToken string `yaml:"access_token" secret:"true"`
	// SelfID, when set, is the only bot account accepted (reverse mode).
	SelfID string `yaml:"self_id"`
	// MessageFormat of what cyan sends: array (segments, the default) or
	// string (CQ codes).
	MessageFormat string `yaml:"message_format"`
	// Reconnect is the longest wait between forward-mode connection
	// attempts (they start at a second and double).
	Reconnect config.Duration `yaml:"reconnect"`
	// Timeout bounds one API call (send_group_msg …).
	Timeout config.Duration `yaml:"timeout"`
	Manners *config.Manners `yaml:"manners"`
	// MediaOrigins are the implementation's own file servers
	// ("127.0.0.1:6099"), whose image URLs may be on loopback or the LAN;
	// every other image URL must be a public address (bridge.FetchPolicy).
	MediaOrigins []string `yaml:"media_origins"`
}

// Names implements registry.Section.
func (s *Section) Names() []string {
	var out []string
	for _, c := range *s {
		out = append(out, c.Name)
	}
	return out
}

// Validate implements registry.Section.
func (s *Section) Validate(key string, bad registry.Fault) {
	reverseTokens := map[string]string{}
	for i, b := range *s {
		key := fmt.Sprintf("%s[%d]", key, i)
		switch b.Mode {
		case "reverse":
			if other, ok := reverseTokens[b.AccessToken]; ok {
				bad(key+".access_token", "two reverse bridges (%s and this one) share an access token; give each its own so a connection finds its bridge", other)
			}
			reverseTokens[b.AccessToken] = b.Name
		case "forward":
			if u, err := url.Parse(b.URL); err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
				bad(key+".url", "%q is not a ws:// or wss:// URL of the implementation's WebSocket server (e.g. ws://127.0.0.1:3001)", b.URL)
			}
		default:
			bad(key+".mode", "%q is neither reverse (the implementation connects to cyan) nor forward (cyan connects to url)", b.Mode)
		}
		if b.MessageFormat != "" && b.MessageFormat != "array" && b.MessageFormat != "string" {
			bad(key+".message_format", "%q is neither array nor string", b.MessageFormat)
		}
		if b.Reconnect < 0 || b.Timeout < 0 {
			bad(key+".timeout", "durations must not be negative")
		}
		config.ValidateManners(key+".manners", b.Manners, bad)
		for j, o := range b.MediaOrigins {
			if !validOrigin(o) {
				bad(fmt.Sprintf("%s.media_origins[%d]", key, j), "%q is not the host:port of the implementation's file server (e.g. 127.0.0.1:6099)", o)
			}
		}
	}
}

// validOrigin: "host:port" or an http(s) URL with nothing after the
// host:port.
func validOrigin(s string) bool {
	if u, err := url.Parse(s); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		return u.Host != "" && u.Port() != "" && (u.Path == "" || u.Path == "/") && u.RawQuery == "" && u.User == nil
	}
	host, port, err := net.SplitHostPort(s)
	n, perr := strconv.Atoi(port)
	return err == nil && host != "" && perr == nil && n > 0 && n < 65536
}

// Redacted implements registry.Section.
func (s *Section) Redacted(mask func(string) string) registry.Section {
	out := make(Section, len(*s))
	for i, c := range *s {
		c.AccessToken = mask(c.AccessToken)
		out[i] = c
	}
	return &out
}

// Build implements bridge.Platform: an adapter per connection, and one
// reverse WebSocket (ReversePath) for the reverse ones.
func (s *Section) Build(env bridge.Env) (bridge.Built, error) {
	var built bridge.Built
	reverse := map[string]*Adapter{}
	for _, o := range *s {
		ad, err := New(Options{Name: o.Name, Mode: o.Mode, URL: o.URL, AccessToken: o.AccessToken, SelfID: o.SelfID,
			Format: o.MessageFormat, Reconnect: time.Duration(o.Reconnect), Timeout: time.Duration(o.Timeout), Clock: env.Clock,
			Logger: env.Logger.With("bridge", o.Name), MediaOrigins: o.MediaOrigins, Own: env.Addr})
		if err != nil {
			return bridge.Built{}, err
		}
		if o.Mode == "reverse" {
			if o.AccessToken == "" && !config.Loopback(env.Addr) {
				return bridge.Built{}, fmt.Errorf("bridges.onebot %s: a reverse bridge on a non-loopback address (%s) needs an access_token, or anyone who reaches it could speak as anyone", o.Name, env.Addr)
			}
			reverse[o.Name] = ad
		}
		built.Instances = append(built.Instances, bridge.Instance{Name: o.Name, Adapter: ad, Manners: o.Manners})
	}
	if len(reverse) > 0 {
		mux := NewReverseMux(env.Logger, reverse)
		built.Mount = map[string]http.Handler{ReversePath: mux, ReversePath + "/": mux}
	}
	return built, nil
}

// Permanent implements bridge.Platform: none — a refused forward
// connection is retried with waits that grow to minutes (AuthError).
func (s *Section) Permanent(error) (string, bool) { return "", false }

// Doctor implements bridge.Platform: the running daemon's view of each
// connection, else a forward connection tried once.
func (s *Section) Doctor(ctx context.Context, env bridge.DoctorEnv) []bridge.Check {
	var checks []bridge.Check
	for _, o := range *s {
		c := bridge.Check{Name: "bridge " + o.Name}
		st, seen := env.Live[o.Name]
		running := env.Running
		switch {
		case running && seen && st.Offline:
			c.Msg = "OneBot " + o.Mode + ": the connection is up but the account is " + st.State
			c.Fix = "log the QQ account " + st.Self + " in again in the implementation (NapCat's web UI or its QR code); nothing in its chats is heard until then"
		case running && seen && st.Connected && st.Silent != "":
			c.OK, c.Warn = true, true
			c.Msg = fmt.Sprintf("OneBot %s connected, bot %s, but %s", o.Mode, st.Self, st.Silent)
			c.Fix = "check the implementation's log and that the account still receives messages; restarting the implementation usually mends a deaf session"
		case running && seen && st.Connected:
			c.OK, c.Msg = true, fmt.Sprintf("OneBot %s connected, bot %s %s, %d chats, %d waiting to be sent", o.Mode, st.Self, st.SelfName, st.Chats, st.Queue)
		case running && seen && st.State != "":
			c.Msg = "OneBot " + o.Mode + ": " + st.State + st.LastErrorNote()
			c.Fix = "set bridges.onebot[].access_token of bridge " + o.Name + " to the token of the implementation's WebSocket server (NapCat and LLOneBot: its token setting; Lagrange.OneBot: AccessToken), or the other way round"
		case running && seen && strings.Contains(st.LastError, "access token"):
			c.Msg = "OneBot: " + st.LastError
			c.Fix = "use the same token on both sides: bridges.onebot[].access_token and the implementation's token setting"
		case running && seen && o.Mode == "reverse":
			c.OK, c.Warn = true, true
			c.Msg = "OneBot reverse: nothing has connected yet" + st.LastErrorNote()
			c.Fix = fmt.Sprintf("in NapCat or LLOneBot add a reverse WebSocket (websocketClients) to ws://%s%s with this access token", env.Addr, ReversePath)
		case running && seen:
			c.Msg = "OneBot forward: not connected to " + o.URL + st.LastErrorNote()
			c.Fix = "start the implementation with its forward WebSocket server on that address, or correct bridges.onebot[].url"
		case o.Mode == "reverse":
			c.OK, c.Warn = true, true
			c.Msg = "OneBot reverse: the daemon is not running, so nothing can connect"
			c.Fix = fmt.Sprintf("start 'cyan serve', then point the implementation's reverse WebSocket at ws://%s%s", env.Addr, ReversePath)
		default:
			c = dialOnce(ctx, o, env.Timeout)
		}
		if o.Mode == "reverse" && o.AccessToken == "" {
			c.Warn = true
			c.Msg += "; no access_token is set, so any local program could connect and speak as anyone"
			if c.Fix == "" {
				c.Fix = "set bridges.onebot[].access_token and the same token in the implementation"
			}
		}
		checks = append(checks, c)
	}
	return checks
}

// dialOnce connects to a forward-mode implementation once.
func dialOnce(ctx context.Context, o Config, timeout time.Duration) bridge.Check {
	c := bridge.Check{Name: "bridge " + o.Name}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	hdr := http.Header{}
	if o.AccessToken != "" {
		hdr.Set("Authorization", "Bearer "+o.AccessToken)
	}
	ws, resp, err := websocket.Dial(ctx, o.URL, &websocket.DialOptions{HTTPHeader: hdr})
	switch {
	case err == nil && refusedByFrame(ctx, ws):
		c.Msg = fmt.Sprintf("OneBot forward: failed: wrong access_token — %s answered retcode 1403 (token验证失败) and closed", o.URL)
		c.Fix = "set bridges.onebot[].access_token of bridge " + o.Name + " to the token of the implementation's forward WebSocket server"
	case err == nil:
		ws.Close(websocket.StatusNormalClosure, "cyan doctor")
		c.OK, c.Msg = true, "OneBot forward: "+o.URL+" accepts the connection and the token"
	case resp != nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden):
		c.Msg = fmt.Sprintf("OneBot forward: %s refused the access token (HTTP %d)", o.URL, resp.StatusCode)
		c.Fix = "set bridges.onebot[].access_token to the token of the implementation's forward WebSocket server"
	default:
		c.Msg = fmt.Sprintf("OneBot forward: cannot connect to %s: %v", o.URL, err)
		c.Fix = "start the implementation with its forward WebSocket server enabled on that address, or correct bridges.onebot[].url"
	}
	return c
}

// refusedByFrame reads what a forward server says first, for a second: a
// {"retcode":1403} frame or a close is NapCat's and LLOneBot's answer to a
// wrong token (they accept the upgrade, then refuse). A lifecycle event,
// a heartbeat or silence mean the token was taken.
func refusedByFrame(ctx context.Context, ws *websocket.Conn) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_, b, err := ws.Read(ctx)
	if err != nil {
		var ce websocket.CloseError
		return errors.As(err, &ce)
	}
	var r struct {
		Retcode int `json:"retcode"`
	}
	return json.Unmarshal(b, &r) == nil && r.Retcode == 1403
}
