package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/bridge"
	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/registry"
)

// This file is the platform's whole declaration (package registry): its
// section bridges.telegram, its defaults and checks, how its bridges are
// built, its doctor check and which of its errors a restart cannot mend.

func init() {
	registry.RegisterPlatform(registry.Platform{Key: "telegram",
		About: "Telegram bots through the Bot API, long polling or a webhook",
		New:   func() registry.Section { return new(Section) }})
}

// Section is bridges.telegram: the Telegram bots.
type Section []Config

var _ bridge.Platform = (*Section)(nil)

// Config is one Telegram bot.
type Config struct {
	Name  string `yaml:"name"`
	Token string `yaml:"token" secret:"true"`
	// APIURL is the Bot API server (https://api.telegram.org by default).
	APIURL string `yaml:"api_url"`
	// Webhook, when its URL is set, receives updates by webhook at
	// /telegram/<name>/webhook instead of long polling.
	Webhook Webhook `yaml:"webhook"`
	// PollTimeout is the long-polling timeout of getUpdates.
	PollTimeout config.Duration `yaml:"poll_timeout"`
	Manners     *config.Manners `yaml:"manners"`
}

// Webhook is the optional webhook mode of a Telegram bot.
type Webhook struct {
	// URL is the public https URL Telegram posts to; it must reach this
	// daemon's /telegram/<name>/webhook.
	URL string `yaml:"url"`
	// Secret is sent back by Telegram in X-Telegram-Bot-Api-Secret-Token.
	Secret string `yaml:"secret" secret:"true"`
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
	for i, b := range *s {
		key := fmt.Sprintf("%s[%d]", key, i)
		if id, secret, ok := strings.Cut(b.Token, ":"); !ok || id == "" || secret == "" {
			bad(key+".token", "is not a bot token (123456:ABC…); ask @BotFather for one")
		}
		if u, err := url.Parse(b.APIURL); b.APIURL != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
			bad(key+".api_url", "%q is not an http(s) URL (the default is https://api.telegram.org)", b.APIURL)
		}
		if w := b.Webhook.URL; w != "" {
			if u, err := url.Parse(w); err != nil || u.Scheme != "https" || u.Host == "" {
				bad(key+".webhook.url", "%q is not an https URL (Telegram posts only to https)", w)
			}
			if len(b.Webhook.Secret) < 16 {
				bad(key+".webhook.secret", "a webhook needs a secret of at least 16 characters (A-Z, a-z, 0-9, _ and -), or anyone could post updates as anyone")
			}
		}
		if b.PollTimeout < 0 {
			bad(key+".poll_timeout", "must not be negative")
		}
		config.ValidateManners(key+".manners", b.Manners, bad)
	}
}

// Redacted implements registry.Section.
func (s *Section) Redacted(mask func(string) string) registry.Section {
	out := make(Section, len(*s))
	for i, c := range *s {
		c.Token = mask(c.Token)
		c.Webhook.Secret = mask(c.Webhook.Secret)
		out[i] = c
	}
	return &out
}

// Build implements bridge.Platform: an adapter per bot; a webhook bot's
// endpoint (WebhookPath) is served on the API's server.
func (s *Section) Build(env bridge.Env) (bridge.Built, error) {
	built := bridge.Built{Mount: map[string]http.Handler{}}
	for _, t := range *s {
		ad, err := New(Options{Name: t.Name, Token: t.Token, APIURL: t.APIURL, PollTimeout: time.Duration(t.PollTimeout),
			WebhookURL: t.Webhook.URL, WebhookSecret: t.Webhook.Secret, Clock: env.Clock, Logger: env.Logger.With("bridge", t.Name)})
		if err != nil {
			return bridge.Built{}, err
		}
		if t.Webhook.URL != "" {
			built.Mount[WebhookPath(t.Name)] = ad.Webhook()
		}
		built.Instances = append(built.Instances, bridge.Instance{Name: t.Name, Adapter: ad, Manners: t.Manners})
	}
	return built, nil
}

// Permanent implements bridge.Platform: a token the Bot API refused
// (ErrToken) stays refused until the configuration changes.
func (s *Section) Permanent(err error) (string, bool) {
	if errors.Is(err, ErrToken) {
		return "fix the token and restart (cyan doctor explains)", true
	}
	return "", false
}

// Doctor implements bridge.Platform: the running daemon's view of a
// connected bot, else getMe.
func (s *Section) Doctor(ctx context.Context, env bridge.DoctorEnv) []bridge.Check {
	var checks []bridge.Check
	for _, t := range *s {
		st, seen := env.Live[t.Name]
		var c bridge.Check
		switch {
		case env.Running && seen && st.Connected && st.Silent != "":
			c = bridge.Check{Name: "bridge " + t.Name, OK: true, Warn: true,
				Msg: fmt.Sprintf("Telegram bot %s connected, but %s", st.SelfName, st.Silent),
				Fix: "check that no other program polls this bot's updates (getUpdates or a webhook set elsewhere)"}
		case env.Running && seen && st.Connected:
			c = bridge.Check{Name: "bridge " + t.Name, OK: true,
				Msg: fmt.Sprintf("Telegram bot %s (id %s) connected, %d chats, %d waiting to be sent", st.SelfName, st.Self, st.Chats, st.Queue)}
		default:
			c = getMe(ctx, t, env.Timeout)
			if env.Running && seen && st.LastError != "" && c.OK {
				c.Warn, c.Msg = true, c.Msg+st.LastErrorNote()
			}
		}
		checks = append(checks, c)
	}
	return checks
}

// getMe asks the Bot API who the bot is.
func getMe(ctx context.Context, t Config, timeout time.Duration) bridge.Check {
	c := bridge.Check{Name: "bridge " + t.Name}
	api := strings.TrimRight(t.APIURL, "/")
	if api == "" {
		api = DefaultAPIURL
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, api+"/bot"+t.Token+"/getMe", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.Msg = "Telegram: cannot reach " + api + " (the request failed)"
		c.Fix = "check the network (or a proxy) to the Bot API, or bridges.telegram[].api_url"
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
		c.OK, c.Msg = true, "Telegram: the token is good: bot @"+body.Result.Username
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusNotFound:
		c.Msg = "Telegram: the Bot API refused the token (" + body.Description + ")"
		c.Fix = "copy the token @BotFather gave (/token in a chat with @BotFather) into bridges.telegram[].token"
	default:
		c.Msg = fmt.Sprintf("Telegram: getMe answered HTTP %d %s", resp.StatusCode, body.Description)
	}
	return c
}
