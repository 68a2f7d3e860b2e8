package config

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// Bridges configures the chat-app bridges: several instances of each
// platform may run (two QQ accounts, a Telegram bot), each named; the name
// is the prefix of its channels ("qq:group:123") and of its speakers' ids
// ("qq:12345", written "id:qq:12345" in permissions.owners).
type Bridges struct {
	OneBot   []OneBotBridge   `yaml:"onebot"`
	Telegram []TelegramBridge `yaml:"telegram"`
	// Manners are the group-chat manners of every bridge; an instance's own
	// manners override the fields they set (non-zero values).
	Manners Manners `yaml:"manners"`
}

// OneBotBridge is one OneBot v11 connection (NapCat, LLOneBot, Lagrange).
type OneBotBridge struct {
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
	Reconnect Duration `yaml:"reconnect"`
	// Timeout bounds one API call (send_group_msg …).
	Timeout Duration `yaml:"timeout"`
	Manners *Manners `yaml:"manners"`
}

// TelegramBridge is one Telegram bot.
type TelegramBridge struct {
	Name  string `yaml:"name"`
	Token string `yaml:"token" secret:"true"`
	// APIURL is the Bot API server (https://api.telegram.org by default).
	APIURL string `yaml:"api_url"`
	// Webhook, when its URL is set, receives updates by webhook at
	// /telegram/<name>/webhook instead of long polling.
	Webhook TelegramWebhook `yaml:"webhook"`
	// PollTimeout is the long-polling timeout of getUpdates.
	PollTimeout Duration `yaml:"poll_timeout"`
	Manners     *Manners `yaml:"manners"`
}

// TelegramWebhook is the optional webhook mode of a Telegram bot.
type TelegramWebhook struct {
	// URL is the public https URL Telegram posts to; it must reach this
	// daemon's /telegram/<name>/webhook.
	URL string `yaml:"url"`
	// Secret is sent back by Telegram in X-Telegram-Bot-Api-Secret-Token.
	Secret string `yaml:"secret" secret:"true"`
}

// Manners are how a bridge behaves in chats, above all in busy groups.
type Manners struct {
	// Names the bot answers to in a group besides an @mention (the
	// persona's name is always one).
	Names []string `yaml:"names"`
	// WakeWords also address the bot when a message contains one.
	WakeWords []string `yaml:"wake_words"`
	// ChimeIn is the chance (0–1) that a group message not addressed to
	// the bot gets a turn anyway.
	ChimeIn float64 `yaml:"chime_in"`
	// Debounce: an addressed message waits this long for more before its
	// turn, so a burst is answered once; at most MaxWait in all.
	Debounce Duration `yaml:"debounce"`
	MaxWait  Duration `yaml:"max_wait"`
	// GroupTurns is the most turns a group gets per minute (later ones
	// wait); UserTurns the most one person may trigger per minute (more are
	// stored, not answered). 0: no limit.
	GroupTurns int `yaml:"group_turns_per_minute"`
	UserTurns  int `yaml:"user_turns_per_minute"`
	// AllowGroups, when not empty, are the only groups served; DenyGroups
	// and DenyUsers are never served (their messages are not even kept).
	AllowGroups []string `yaml:"allow_groups"`
	DenyGroups  []string `yaml:"deny_groups"`
	DenyUsers   []string `yaml:"deny_users"`
	// QuietHours ("23:00-07:00", local time): no turns in groups; what was
	// addressed then is answered when they end.
	QuietHours string `yaml:"quiet_hours"`
	// ReplyDelay + CharDelay per character (at most MaxDelay) is the pause
	// before each further part of a reply, as a person types.
	ReplyDelay Duration `yaml:"reply_delay"`
	CharDelay  Duration `yaml:"char_delay"`
	MaxDelay   Duration `yaml:"max_delay"`
	// TypingEvery is how often "typing…" is shown while a turn runs.
	TypingEvery Duration `yaml:"typing_every"`
	// ImageMaxBytes bounds one kept image; ImagesMaxBytes all the images a
	// bridge keeps (the oldest go first).
	ImageMaxBytes  int64 `yaml:"image_max_bytes"`
	ImagesMaxBytes int64 `yaml:"images_max_bytes"`
	// IgnorePokes are the groups (their ids, or "*" for all) where a poke
	// of the bot is kept but does not address it; elsewhere, and always in
	// a private chat, a poke asks for a turn as a mention does.
	IgnorePokes []string `yaml:"ignore_pokes"`
}

// DefaultManners suit a busy group.
func DefaultManners() Manners {
	return Manners{
		Debounce: Duration(2 * time.Second), MaxWait: Duration(8 * time.Second),
		GroupTurns: 6, UserTurns: 3,
		ReplyDelay: Duration(600 * time.Millisecond), CharDelay: Duration(30 * time.Millisecond), MaxDelay: Duration(4 * time.Second),
		TypingEvery:   Duration(4 * time.Second),
		ImageMaxBytes: 5 << 20, ImagesMaxBytes: 200 << 20,
	}
}

// Over returns m with the fields o sets (non-zero) taken from o.
func (m Manners) Over(o *Manners) Manners {
	if o == nil {
		return m
	}
	if o.Names != nil {
		m.Names = o.Names
	}
	if o.IgnorePokes != nil {
		m.IgnorePokes = o.IgnorePokes
	}
	if o.WakeWords != nil {
		m.WakeWords = o.WakeWords
	}
	if o.ChimeIn != 0 {
		m.ChimeIn = o.ChimeIn
	}
	for _, d := range []struct{ dst, src *Duration }{
		{&m.Debounce, &o.Debounce}, {&m.MaxWait, &o.MaxWait}, {&m.ReplyDelay, &o.ReplyDelay},
		{&m.CharDelay, &o.CharDelay}, {&m.MaxDelay, &o.MaxDelay}, {&m.TypingEvery, &o.TypingEvery},
	} {
		if *d.src != 0 {
			*d.dst = *d.src
		}
	}
	if o.GroupTurns != 0 {
		m.GroupTurns = o.GroupTurns
	}
	if o.UserTurns != 0 {
		m.UserTurns = o.UserTurns
	}
	if o.AllowGroups != nil {
		m.AllowGroups = o.AllowGroups
	}
	if o.DenyGroups != nil {
		m.DenyGroups = o.DenyGroups
	}
	if o.DenyUsers != nil {
		m.DenyUsers = o.DenyUsers
	}
	if o.QuietHours != "" {
		m.QuietHours = o.QuietHours
	}
	if o.ImageMaxBytes != 0 {
		m.ImageMaxBytes = o.ImageMaxBytes
	}
	if o.ImagesMaxBytes != 0 {
		m.ImagesMaxBytes = o.ImagesMaxBytes
	}
	return m
}

var bridgeName = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)

// validateBridges checks the bridges section.
func (c *Config) validateBridges(bad func(key, format string, args ...any)) {
	seen := map[string]string{}
	name := func(key, n string) {
		switch {
		case !bridgeName.MatchString(n):
			bad(key+".name", "%q is not a bridge name: use 1–32 lower-case letters, digits, - or _, starting with a letter (it prefixes channels, e.g. qq:group:123)", n)
		case seen[n] != "":
			bad(key+".name", "%q is already the name of %s; each bridge needs its own", n, seen[n])
		default:
			seen[n] = key
		}
	}
	reverseTokens := map[string]string{}
	for i, b := range c.Bridges.OneBot {
		key := fmt.Sprintf("bridges.onebot[%d]", i)
		name(key, b.Name)
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
		c.validateManners(key+".manners", b.Manners, bad)
	}
	for i, b := range c.Bridges.Telegram {
		key := fmt.Sprintf("bridges.telegram[%d]", i)
		name(key, b.Name)
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
		c.validateManners(key+".manners", b.Manners, bad)
	}
	c.validateManners("bridges.manners", &c.Bridges.Manners, bad)
}

func (c *Config) validateManners(key string, m *Manners, bad func(key, format string, args ...any)) {
	if m == nil {
		return
	}
	if m.ChimeIn < 0 || m.ChimeIn > 1 {
		bad(key+".chime_in", "%g is not a chance from 0 to 1", m.ChimeIn)
	}
	if m.GroupTurns < 0 || m.UserTurns < 0 {
		bad(key+".group_turns_per_minute", "turn limits must not be negative (0: no limit)")
	}
	if m.QuietHours != "" && !validSpan(m.QuietHours) {
		bad(key+".quiet_hours", "%q is not HH:MM-HH:MM, e.g. 23:00-07:00", m.QuietHours)
	}
	if m.Debounce < 0 || m.MaxWait < 0 || m.ReplyDelay < 0 || m.CharDelay < 0 || m.MaxDelay < 0 || m.TypingEvery < 0 {
		bad(key+".debounce", "durations must not be negative")
	}
	if m.ImageMaxBytes < 0 || m.ImagesMaxBytes < 0 {
		bad(key+".image_max_bytes", "sizes must not be negative")
	}
}

// BridgeNames lists the configured bridges' names.
func (b Bridges) BridgeNames() []string {
	var out []string
	for _, o := range b.OneBot {
		out = append(out, o.Name)
	}
	for _, t := range b.Telegram {
		out = append(out, t.Name)
	}
	return out
}

// redacted masks the bridges' tokens.
func (b Bridges) redacted() Bridges {
	ob := make([]OneBotBridge, len(b.OneBot))
	for i, o := range b.OneBot {
		o.AccessToken = Mask(o.AccessToken)
		ob[i] = o
	}
	tg := make([]TelegramBridge, len(b.Telegram))
	for i, t := range b.Telegram {
		t.Token = Mask(t.Token)
		t.Webhook.Secret = Mask(t.Webhook.Secret)
		tg[i] = t
	}
	b.OneBot, b.Telegram = ob, tg
	return b
}
