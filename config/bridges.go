package config

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/cyan-agent/cyan/registry"
)

// Bridges configures the chat-app bridges: several instances of each
// platform may run (two QQ accounts, a Telegram bot), each named; the name
// is the prefix of its channels ("qq:group:123") and of its speakers' ids
// ("qq:12345", written "id:qq:12345" in permissions.owners).
//
// Each platform's instances are its section, bridges.<key> (onebot,
// telegram, …): the platform package declares the section's type, its
// defaults and checks (package registry), and config decodes it there; a
// key no platform registered is an unknown key.
type Bridges struct {
	// Platforms are the configured platforms' sections, by key.
	Platforms map[string]registry.Section `yaml:"-"`
	// Manners are the group-chat manners of every bridge; an instance's own
	// manners override the fields they set (non-zero values).
	Manners Manners `yaml:"manners"`
	// ResumeMaxAge: at start, a chat whose newest message addressed to the
	// companion has no answer (a restart cut its turn) gets that turn, once,
	// if the message is at most this old; older ones are listed in `cyan
	// bridges`. 0 resumes none. Default 30m.
	ResumeMaxAge Duration `yaml:"resume_max_age"`
	// SilentAfter: a connected bridge whose chats were busy and that then
	// hears nothing this long is probed (OneBot get_status, Telegram
	// getMe) and flagged in `cyan bridges` and doctor. Default 15m; a
	// negative value turns the watch off.
	SilentAfter Duration `yaml:"silent_after"`
}

// Names are the configured bridges' names: each platform's instances in
// the order configured, the platforms by key.
func (b Bridges) Names() []string {
	var out []string
	for _, p := range registry.Platforms() {
		if s := b.Platforms[p.Key]; s != nil {
			out = append(out, s.Names()...)
		}
	}
	return out
}

// Section is the configured section of a platform, nil when it has none.
func (b Bridges) Section(key string) registry.Section { return b.Platforms[key] }

// section makes the section of a registered platform for the decoder
// (bridges.<key>), or reports that no platform has that key.
func (b *Bridges) section(key string) (reflect.Value, bool) {
	p, ok := registry.PlatformOf(key)
	if !ok {
		return reflect.Value{}, false
	}
	s := p.New()
	if b.Platforms == nil {
		b.Platforms = map[string]registry.Section{}
	}
	b.Platforms[key] = s
	return reflect.ValueOf(s).Elem(), true
}

// platformSections names the platforms' sections: "bridges.onebot,
// bridges.telegram".
func platformSections() string {
	var out []string
	for _, k := range registry.PlatformKeys() {
		out = append(out, "bridges."+k)
	}
	return strings.Join(out, ", ")
}

// sectionKeys are the registered platforms' keys, for "known keys here".
func (b *Bridges) sectionKeys() []string { return registry.PlatformKeys() }

// MarshalYAML writes every registered platform's section (an empty list
// when it has none), then the shared keys.
func (b Bridges) MarshalYAML() (any, error) {
	n := &yaml.Node{Kind: yaml.MappingNode}
	add := func(k string, v any) error {
		var val yaml.Node
		if err := val.Encode(v); err != nil {
			return err
		}
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, &val)
		return nil
	}
	for _, p := range registry.Platforms() {
		var v any = []any{}
		if s := b.Platforms[p.Key]; s != nil {
			v = s
		}
		if err := add(p.Key, v); err != nil {
			return nil, err
		}
	}
	if err := add("manners", b.Manners); err != nil {
		return nil, err
	}
	if err := add("resume_max_age", b.ResumeMaxAge); err != nil {
		return nil, err
	}
	if err := add("silent_after", b.SilentAfter); err != nil {
		return nil, err
	}
	return n, nil
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
	// ChatImagesMaxBytes bounds the images one chat keeps (its oldest go
	// first), so one group's flood cannot push out everyone's pictures.
	// Images also stop, named "not saved: disk low", well above
	// store.min_free_mb: messages always win over pictures.
	ChatImagesMaxBytes int64 `yaml:"chat_images_max_bytes"`
	// IgnorePokes are the groups (their ids, or "*" for all) where a poke
	// of the bot is kept but does not address it; elsewhere, and always in
	// a private chat, a poke asks for a turn as a mention does.
	IgnorePokes []string `yaml:"ignore_pokes"`
	// Commands turns the chat commands on (default true) — /help,
	// /start, /reset, and the owner's /pause and /resume — answered by the
	// bridge at once; false leaves them to the model as text.
	Commands *bool `yaml:"commands"`
}

// DefaultManners suit a busy group.
func DefaultManners() Manners {
	return Manners{
		Debounce: Duration(2 * time.Second), MaxWait: Duration(8 * time.Second),
		GroupTurns: 6, UserTurns: 3,
		ReplyDelay: Duration(600 * time.Millisecond), CharDelay: Duration(30 * time.Millisecond), MaxDelay: Duration(4 * time.Second),
		TypingEvery:   Duration(4 * time.Second),
		ImageMaxBytes: 5 << 20, ImagesMaxBytes: 200 << 20, ChatImagesMaxBytes: 50 << 20,
		Commands: new(true),
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
	if o.Commands != nil {
		m.Commands = o.Commands
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
	if o.ChatImagesMaxBytes != 0 {
		m.ChatImagesMaxBytes = o.ChatImagesMaxBytes
	}
	return m
}

var bridgeName = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)

// validateBridges checks the bridges section: every instance's name, across
// platforms, then each platform's own section (registry.Section.Validate).
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
	if c.Bridges.ResumeMaxAge < 0 {
		bad("bridges.resume_max_age", "must not be negative; 0 resumes no cut turn, e.g. 30m")
	}
	for _, p := range registry.Platforms() {
		s := c.Bridges.Platforms[p.Key]
		if s == nil {
			continue
		}
		key := "bridges." + p.Key
		for i, n := range s.Names() {
			name(fmt.Sprintf("%s[%d]", key, i), n)
		}
		s.Validate(key, bad)
	}
	ValidateManners("bridges.manners", &c.Bridges.Manners, bad)
}

// ValidateManners checks manners at key (an instance's own, or the shared
// bridges.manners); nil is valid (the shared ones apply).
func ValidateManners(key string, m *Manners, bad registry.Fault) {
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
	if m.ImageMaxBytes < 0 || m.ImagesMaxBytes < 0 || m.ChatImagesMaxBytes < 0 {
		bad(key+".image_max_bytes", "sizes must not be negative")
	}
}

// redacted masks the platforms' secrets.
func (b Bridges) redacted() Bridges {
	if b.Platforms == nil {
		return b
	}
	out := make(map[string]registry.Section, len(b.Platforms))
	for k, s := range b.Platforms {
		out[k] = s.Redacted(Mask)
	}
	b.Platforms = out
	return b
}
