package bridge

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Kind is the kind of a chat.
type Kind string

// The chat kinds.
const (
	Group   Kind = "group"
	Private Kind = "private"
)

// Chat is one conversation on a platform: a group, a private chat, or a
// forum topic of a group (Telegram), which is a conversation of its own.
type Chat struct {
	Kind Kind
	ID   string // the platform's group or user id
	// Thread is the forum topic of a group ("" : the group itself, or its
	// General topic).
	Thread string
}

// Channel is the chat's channel name under a bridge: "qq:group:123", and
// "tg:group:-100123:42" for a forum topic.
func (c Chat) Channel(bridge string) string {
	ch := bridge + ":" + string(c.Kind) + ":" + c.ID
	if c.Thread != "" {
		ch += ":" + c.Thread
	}
	return ch
}

// ParseChannel reads a channel name of the bridge back into a chat.
func ParseChannel(bridge, channel string) (Chat, bool) {
	rest, ok := strings.CutPrefix(channel, bridge+":")
	if !ok {
		return Chat{}, false
	}
	kind, id, ok := strings.Cut(rest, ":")
	if !ok || id == "" || (kind != string(Group) && kind != string(Private)) {
		return Chat{}, false
	}
	c := Chat{Kind: Kind(kind), ID: id}
	if chatID, thread, ok := strings.Cut(id, ":"); ok {
		if kind != string(Group) || chatID == "" || thread == "" || strings.Contains(thread, ":") {
			return Chat{}, false
		}
		c.ID, c.Thread = chatID, thread
	}
	return c, true
}

// User is a person (or bot) on a platform.
type User struct {
	ID   string
	Name string // display name: a group card, a nickname, a first name
	// Username is the platform handle (Telegram's @username), when any.
	Username string
	IsBot    bool
}

// PartKind is the kind of a message part.
type PartKind string

// The part kinds every adapter maps its segments to.
const (
	PartText    PartKind = "text"
	PartMention PartKind = "mention" // UserID (Text: the name shown, if any); "all" for everyone
	PartReply   PartKind = "reply"   // MessageID of the message replied to
	PartImage   PartKind = "image"
	PartSticker PartKind = "sticker" // Text: its emoji or name
	PartVoice   PartKind = "voice"
	PartFace    PartKind = "face" // a platform emoticon: Text is its id or name
	PartOther   PartKind = "other"
)

// Part is one piece of an incoming message.
type Part struct {
	Kind      PartKind
	Text      string
	UserID    string // mention
	MessageID string // reply
	// ToSelf marks a reply to one of the bot's own messages, when the
	// platform says so (Telegram); otherwise the bridge checks the ids it
	// sent.
	ToSelf bool
	// ReplyFrom and ReplyText describe the message replied to, when the
	// platform includes it.
	ReplyFrom string
	ReplyText string
	ReplyTime time.Time // when it was said, when known
	// Media of an image, sticker or voice part.
	Media *Media
}

// Media is a file attached to a message.
type Media struct {
	Name     string // the platform's file name or id
	URL      string
	Size     int64 // bytes, 0 when unknown
	MIME     string
	Duration time.Duration // voice
	// Fetch downloads the file, at most max bytes (nil: not downloadable).
	Fetch func(ctx context.Context, max int64) ([]byte, error)
}

// Message is an incoming message, in the form every adapter produces.
type Message struct {
	Chat  Chat
	From  User
	ID    string // the platform's message id
	Time  time.Time
	Parts []Part
	// Command is a "/command" addressed to this bot (Telegram), without the
	// slash and the bot suffix.
	Command string
	// Notice marks a service message — someone joined or left, the chat
	// was renamed or upgraded, a message was pinned: its parts are kept as
	// a platform line ("^system"), never as From's message, and ask for no
	// turn. From is who caused it, when known.
	Notice bool
	// Edited marks a new version of the message ID already received: the
	// stored text is replaced (Editor), and the edit asks for a turn when
	// it addresses the bot and the first version did not.
	Edited bool
	// Missed marks a message said while the bridge was away, found in the
	// chat's history after a connection (CatchUp): it is stored in its own
	// time and starts no turn of its own (catchup.go).
	Missed bool
}

// Text is the plain text of the message's text parts.
func (m *Message) Text() string {
	var b strings.Builder
	for _, p := range m.Parts {
		if p.Kind == PartText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// OutPart is one piece of an outgoing message.
type OutPart struct {
	Kind      PartKind // PartText, PartMention, PartReply or PartVoice
	Text      string   // text; the name shown for a mention; the words of a voice
	UserID    string   // mention
	MessageID string   // reply
	// Audio is a voice part's sound, in the adapter's VoiceFormat; a
	// voice part is a message of its own.
	Audio []byte
}

// Outgoing is one message to send.
type Outgoing struct {
	Parts []OutPart
}

// Text is the outgoing message as plain text (mentions as "@name").
func (o Outgoing) Text() string {
	var b strings.Builder
	for _, p := range o.Parts {
		switch p.Kind {
		case PartText:
			b.WriteString(p.Text)
		case PartMention:
			b.WriteString("@" + p.Text)
		}
	}
	return b.String()
}

// Sink receives what an adapter hears. Its methods must not block for long:
// an adapter calls them from its read loop.
type Sink interface {
	// Inbound handles one incoming message.
	Inbound(ctx context.Context, m *Message)
	// Connected reports a (re)connection and who the bot is on the platform.
	Connected(self User)
	// Disconnected reports a lost connection (err says why; nil on stop).
	Disconnected(err error)
	// Problem reports an error that did not end the connection (a malformed
	// event, a refused connection attempt), for the bridge's state.
	Problem(err error)
}

// Adapter speaks one platform's protocol.
type Adapter interface {
	// Platform names the protocol ("onebot", "telegram").
	Platform() string
	// Run keeps the connection until ctx ends and hands what it hears to
	// sink. It returns nil when ctx ends, or the error that ended the
	// connection: the bridge is a supervised part, restarted with backoff,
	// unless its platform calls the error permanent (a wrong token;
	// Platform.Permanent). An adapter never reconnects inside Run: one
	// whose protocol needs waits of its own (OneBot's forward dialer,
	// which learns a refused token over several attempts) marks its error
	// with them (supervise.RetryAfter), and one whose connection proved
	// itself says so (supervise.Healthy).
	Run(ctx context.Context, sink Sink) error
	// Send sends one message and returns its platform id. ErrOffline means
	// no connection now (try again after the next Connected); a *SendError
	// says whether trying again may help.
	Send(ctx context.Context, chat Chat, m Outgoing) (string, error)
	// Typing shows that the bot is typing in the chat, where the platform
	// has a way (ErrUnsupported where not).
	Typing(ctx context.Context, chat Chat) error
}

// Finder is an adapter that can look in a chat for a message the bot sent
// (OneBot: the chat's history). After a crash cut a send (Flights), the
// bridge asks it before sending the message again.
type Finder interface {
	// FindSent looks in chat for the bot's own message m, said at or after
	// since, and returns its platform id when found. An error says it could
	// not look to the end (ErrOffline: no connection now).
	FindSent(ctx context.Context, chat Chat, m Outgoing, since time.Time) (id string, found bool, err error)
}

// Errors of adapters.
var (
	ErrOffline     = errors.New("bridge: not connected")
	ErrUnsupported = errors.New("bridge: not supported by this platform")
	// ErrDuplicate is an incoming message the chat already holds.
	ErrDuplicate = errors.New("bridge: duplicate message")
)

// SendError is a platform's refusal to send.
type SendError struct {
	// Temporary: trying again later may work (rate limited, a timeout).
	Temporary bool
	// TooLong: the platform refused the message as too long; the bridge
	// splits it and sends the pieces.
	TooLong bool
	// RetryAfter is the platform's advice, when it gave one.
	RetryAfter time.Duration
	Msg        string
	// Unknown: the message was handed to the platform and no answer came
	// (a timeout after the request was written), and the adapter could not
	// find out whether it was posted. The bridge never sends it again
	// (one late message is better than two) and reports the outcome as
	// unknown. An adapter that can look (OneBot: the chat's history)
	// answers Temporary when the message is not there instead.
	Unknown bool
	// Unlooked, with Unknown: the adapter could not look for lack of a
	// connection. A bridge that keeps flights (Flights) and whose adapter
	// can look (Finder) keeps the send's flight and looks for it over the
	// next connection instead of settling it as unknown.
	Unlooked bool
	// Muted: the bot may not write in the chat (muted in a QQ group, no
	// right to send in a Telegram group) until Until (zero: not known).
	// Nothing was sent; the chat's answers wait (see Bridge.Deliver).
	Muted bool
	Until time.Time
	// MovedTo is the chat's new id when the platform moved it (a Telegram
	// group upgraded to a supergroup): nothing was sent, and the bridge
	// sends it there, keeping the conversation's channel.
	MovedTo string
	// ReplyRefused: the platform refused the message for its reply segment
	// (the message replied to does not exist: Lagrange's retcode 200); the
	// bridge sends it again without the reply.
	ReplyRefused bool
}

func (e *SendError) Error() string {
	if e.RetryAfter > 0 {
		return fmt.Sprintf("%s (retry after %s)", e.Msg, e.RetryAfter)
	}
	return e.Msg
}

// VoiceSender is an adapter that sends voice messages: a message whose
// one part is a PartVoice, its Audio in the MIME type VoiceFormat names
// ("audio/wav" for OneBot's record, "audio/ogg" with Opus for
// Telegram's sendVoice).
type VoiceSender interface {
	VoiceFormat() string
}
