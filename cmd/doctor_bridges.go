package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/cyan-agent/cyan/api"
	"github.com/cyan-agent/cyan/bridge"
	"github.com/cyan-agent/cyan/bridge/onebot"
	"github.com/cyan-agent/cyan/bridge/telegram"
	"github.com/cyan-agent/cyan/config"
)

// checkBridges checks each configured bridge: through the running
// daemon's view when one answers, else by reaching the platform directly
// (a Telegram getMe, a OneBot forward connection).
func checkBridges(cfg *config.Config, timeout time.Duration) []check {
	if len(cfg.Bridges.OneBot)+len(cfg.Bridges.Telegram) == 0 {
		return nil
	}
	live := map[string]bridge.Status{}
	var out api.BridgeList
	running := newClient(cfg).do("GET", "/api/v1/bridges", nil, &out) == nil
	for _, b := range out.Bridges {
		live[b.Name] = b
	}
	var checks []check
	for _, o := range cfg.Bridges.OneBot {
		c := check{name: "bridge " + o.Name}
		st, seen := live[o.Name]
		switch {
		case running && seen && st.Connected:
			c.ok, c.msg = true, fmt.Sprintf("OneBot %s connected, bot %s %s, %d chats, %d waiting to be sent", o.Mode, st.Self, st.SelfName, st.Chats, st.Queue)
		case running && seen && st.State != "":
			c.msg = "OneBot " + o.Mode + ": " + st.State + lastError(st)
			c.fix = "set bridges.onebot[].access_token of bridge " + o.Name + " to the token of the implementation's WebSocket server (NapCat and LLOneBot: its token setting; Lagrange.OneBot: AccessToken), or the other way round"
		case running && seen && strings.Contains(st.LastError, "access token"):
			c.msg = "OneBot: " + st.LastError
			c.fix = "use the same token on both sides: bridges.onebot[].access_token and the implementation's token setting"
		case running && seen && o.Mode == "reverse":
			c.ok, c.warn = true, true
			c.msg = "OneBot reverse: nothing has connected yet" + lastError(st)
			c.fix = fmt.Sprintf("in NapCat or LLOneBot add a reverse WebSocket (websocketClients) to ws://%s%s with this access token", cfg.Addr, onebot.ReversePath)
		case running && seen:
			c.msg = "OneBot forward: not connected to " + o.URL + lastError(st)
			c.fix = "start the implementation with its forward WebSocket server on that address, or correct bridges.onebot[].url"
		case o.Mode == "reverse":
			c.ok, c.warn = true, true
			c.msg = "OneBot reverse: the daemon is not running, so nothing can connect"
			c.fix = fmt.Sprintf("start 'cyan serve', then point the implementation's reverse WebSocket at ws://%s%s", cfg.Addr, onebot.ReversePath)
		default:
			c = dialOneBot(o, timeout)
		}
		if o.Mode == "reverse" && o.AccessToken == "" {
			c.warn = true
			c.msg += "; no access_token is set, so any local program could connect and speak as anyone"
			if c.fix == "" {
				c.fix = "set bridges.onebot[].access_token and the same token in the implementation"
			}
		}
		checks = append(checks, c)
	}
	for _, t := range cfg.Bridges.Telegram {
		c := check{name: "bridge " + t.Name}
		st, seen := live[t.Name]
		switch {
		case running && seen && st.Connected:
			c.ok, c.msg = true, fmt.Sprintf("Telegram bot %s (id %s) connected, %d chats, %d waiting to be sent", st.SelfName, st.Self, st.Chats, st.Queue)
		default:
			c = telegramGetMe(t, timeout)
			if running && seen && st.LastError != "" && c.ok {
				c.warn, c.msg = true, c.msg+lastError(st)
			}
		}
		checks = append(checks, c)
	}
	return checks
}

func lastError(st bridge.Status) string {
	if st.LastError == "" {
		return ""
	}
	return " (last error: " + st.LastError + ")"
}

// dialOneBot connects to a forward-mode implementation once.
func dialOneBot(o config.OneBotBridge, timeout time.Duration) check {
	c := check{name: "bridge " + o.Name}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	hdr := http.Header{}
	if o.AccessToken != "" {
		hdr.Set("Authorization", "Bearer "+o.AccessToken)
	}
	ws, resp, err := websocket.Dial(ctx, o.URL, &websocket.DialOptions{HTTPHeader: hdr})
	switch {
	case err == nil && refusedByFrame(ctx, ws):
		c.msg = fmt.Sprintf("OneBot forward: failed: wrong access_token — %s answered retcode 1403 (token验证失败) and closed", o.URL)
		c.fix = "set bridges.onebot[].access_token of bridge " + o.Name + " to the token of the implementation's forward WebSocket server"
	case err == nil:
		ws.Close(websocket.StatusNormalClosure, "cyan doctor")
		c.ok, c.msg = true, "OneBot forward: "+o.URL+" accepts the connection and the token"
	case resp != nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden):
		c.msg = fmt.Sprintf("OneBot forward: %s refused the access token (HTTP %d)", o.URL, resp.StatusCode)
		c.fix = "set bridges.onebot[].access_token to the token of the implementation's forward WebSocket server"
	default:
		c.msg = fmt.Sprintf("OneBot forward: cannot connect to %s: %v", o.URL, err)
		c.fix = "start the implementation with its forward WebSocket server enabled on that address, or correct bridges.onebot[].url"
	}
	return c
}

// telegramGetMe asks the Bot API who the bot is.
func telegramGetMe(t config.TelegramBridge, timeout time.Duration) check {
	c := check{name: "bridge " + t.Name}
	api := strings.TrimRight(t.APIURL, "/")
	if api == "" {
		api = telegram.DefaultAPIURL
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, api+"/bot"+t.Token+"/getMe", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.msg = "Telegram: cannot reach " + api + " (the request failed)"
		c.fix = "check the network (or a proxy) to the Bot API, or bridges.telegram[].api_url"
		return c
	}
	defer resp.Body.Close()
	var body struct {
		OK          bool   `json:"ok"`
		Description string `json:"description"`
		Result      struct {
			Username string `json:"username"`
		} `json:"result"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&body)
	switch {
	case body.OK:
		c.ok, c.msg = true, "Telegram: the token is good: bot @"+body.Result.Username
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusNotFound:
		c.msg = "Telegram: the Bot API refused the token (" + body.Description + ")"
		c.fix = "copy the token @BotFather gave (/token in a chat with @BotFather) into bridges.telegram[].token"
	default:
		c.msg = fmt.Sprintf("Telegram: getMe answered HTTP %d %s", resp.StatusCode, body.Description)
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
