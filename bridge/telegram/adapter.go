package telegram

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/cyan-agent/cyan/bridge"
	"github.com/cyan-agent/cyan/clock"
	"github.com/cyan-agent/cyan/supervise"
)

// DefaultAPIURL is Telegram's Bot API server.
const DefaultAPIURL = "https://api.telegram.org"

// Options configure New.
type Options struct {
	Name   string
	Token  string
	APIURL string // "" : DefaultAPIURL
	// PollTimeout is getUpdates' long-polling timeout. 0: 50 s.
	PollTimeout time.Duration
	// WebhookURL, when set, makes Telegram post updates to it (it must reach
	// WebhookPath) instead of long polling; WebhookSecret is checked.
	WebhookURL    string
	WebhookSecret string
	Clock         clock.Clock
	HTTPClient    *http.Client // downloads; nil: a default
	// SendTimeout bounds one sendMessage (0: DefaultSendTimeout). A send
	// that runs out is not sent again: its outcome is unknown.
	SendTimeout time.Duration
	Logger      *slog.Logger
}

// WebhookPath is where a bridge's webhook is served.
func WebhookPath(name string) string { return "/telegram/" + name + "/webhook" }

// ErrToken is a token the Bot API refused.
var ErrToken = errors.New("telegram: the Bot API refused the token")

// Adapter is one Telegram bot; it implements bridge.Adapter.
type Adapter struct {
	o   Options
	log *slog.Logger

	mu   sync.Mutex
	bot  *tgbot.Bot
	self bridge.User
	hook http.Handler
	// handled is the id of the last update handed to the sink: the next
	// session's getUpdates starts after it, so nothing is handed over
	// twice when a session ends before its offset was confirmed.
	handled atomic.Int64
}

var _ bridge.Adapter = (*Adapter)(nil)

// New checks the options.
func New(o Options) (*Adapter, error) {
	if id, secret, ok := strings.Cut(o.Token, ":"); !ok || id == "" || secret == "" {
		return nil, fmt.Errorf("telegram %s: the token is not a bot token (123456:ABC…); ask @BotFather for one", o.Name)
	}
	if o.APIURL == "" {
		o.APIURL = DefaultAPIURL
	}
	o.APIURL = strings.TrimRight(o.APIURL, "/")
	if o.PollTimeout <= 0 {
		o.PollTimeout = 50 * time.Second
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.SendTimeout <= 0 {
		o.SendTimeout = DefaultSendTimeout
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 60 * time.Second}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Adapter{o: o, log: o.Logger}, nil
}

// Platform implements bridge.Adapter.
func (a *Adapter) Platform() string { return "telegram" }

// Webhook serves the webhook (nil until Run has set it up, or in polling
// mode): the daemon routes WebhookPath to it.
func (a *Adapter) Webhook() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		h := a.hook
		a.mu.Unlock()
		if h == nil {
			http.Error(w, "telegram: the bot is not receiving by webhook", http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Run implements bridge.Adapter: one session with the Bot API — getMe
// (a refused token is ErrToken: it will not get better by itself), then
// deleteWebhook and long polling, or setWebhook — until ctx ends (nil) or
// the session fails (its error). Trying again is the supervisor's: the
// bridge is a supervised part, restarted with backoff, or after the
// Bot API's retry_after when it gave one (supervise.RetryAfter). A
// getUpdates that fails ends the session: the library's own retries
// (every 0.1 to 5 s, for ever, while the bridge read as connected) are
// not used.
func (a *Adapter) Run(ctx context.Context, sink bridge.Sink) error {
	err := a.session(ctx, sink)
	if ctx.Err() != nil {
		return nil
	}
	if err == nil {
		err = errors.New("telegram: the Bot API session ended")
	}
	sink.Problem(err)
	if !errors.Is(err, ErrToken) {
		a.log.Warn("telegram: cannot reach the Bot API", "err", err)
	}
	var tm *tgbot.TooManyRequestsError
	if errors.As(err, &tm) && tm.RetryAfter > 0 {
		return supervise.RetryAfter(err, time.Duration(tm.RetryAfter)*time.Second)
	}
	return err
}

// session runs one connection to the Bot API until ctx ends or, in long
// polling, a getUpdates fails.
func (a *Adapter) session(ctx context.Context, sink bridge.Sink) error {
	polling := a.o.WebhookURL == ""
	sctx, end := context.WithCancelCause(ctx)
	defer end(nil)
	var b *tgbot.Bot
	// An update is handled on Run's context, not the session's: a
	// getUpdates failing does not cut the one being stored (the session
	// ends once it is).
	handler := func(_ context.Context, _ *tgbot.Bot, u *models.Update) {
		migrated(u, sink)
		restricted(u, sink)
		if m := toMessage(u, a.selfUser(), a.fetch); m != nil {
			sink.Inbound(ctx, m)
		}
		a.handled.Store(u.ID)
	}
	b, err := tgbot.New(a.o.Token,
		tgbot.WithServerURL(a.o.APIURL), tgbot.WithSkipGetMe(), tgbot.WithNotAsyncHandlers(),
		tgbot.WithDefaultHandler(handler), tgbot.WithInitialOffset(a.handled.Load()),
		tgbot.WithHTTPClient(a.o.PollTimeout, &http.Client{Timeout: a.o.PollTimeout + 10*time.Second}),
		tgbot.WithErrorsHandler(func(err error) {
			switch {
			case ctx.Err() != nil:
			case polling:
				// The library reports only getUpdates' failures here
				// ("error get updates, %w") while it polls; it would
				// retry on its own clock. The session ends instead.
				if cause := errors.Unwrap(err); cause != nil {
					err = cause
				}
				end(fmt.Errorf("getUpdates: %w", err))
			default:
				a.log.Warn("telegram: Bot API error", "err", err)
				sink.Problem(err)
			}
		}),
		tgbot.WithWebhookSecretToken(a.o.WebhookSecret),
	)
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	me, err := b.GetMe(cctx)
	cancel()
	if err != nil {
		if errors.Is(err, tgbot.ErrorUnauthorized) || errors.Is(err, tgbot.ErrorNotFound) {
			return fmt.Errorf("%w (%v): check bridges.telegram[].token against what @BotFather gave", ErrToken, err)
		}
		return fmt.Errorf("getMe: %w", err)
	}
	self := bridge.User{ID: strconv.FormatInt(me.ID, 10), Name: strings.TrimSpace(me.FirstName + " " + me.LastName), Username: me.Username, IsBot: true}
	a.mu.Lock()
	a.bot, a.self = b, self
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.bot, a.hook = nil, nil
		a.mu.Unlock()
		sink.Disconnected(nil)
	}()
	if !polling {
		if _, err := b.SetWebhook(ctx, &tgbot.SetWebhookParams{URL: a.o.WebhookURL, SecretToken: a.o.WebhookSecret}); err != nil {
			return fmt.Errorf("setWebhook: %w", err)
		}
		a.mu.Lock()
		a.hook = b.WebhookHandler()
		a.mu.Unlock()
		sink.Connected(self)
		a.log.Info("telegram: receiving by webhook", "bot", "@"+self.Username)
		b.StartWebhook(ctx)
		return nil
	}
	if _, err := b.DeleteWebhook(ctx, &tgbot.DeleteWebhookParams{}); err != nil {
		return fmt.Errorf("deleteWebhook: %w", err)
	}
	sink.Connected(self)
	a.log.Info("telegram: long polling", "bot", "@"+self.Username)
	b.Start(sctx)
	if ctx.Err() == nil {
		return context.Cause(sctx)
	}
	return nil
}

func (a *Adapter) selfUser() bridge.User {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.self
}

func (a *Adapter) current() *tgbot.Bot {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.bot
}

// fetch downloads a file through getFile. The URL is not the event's: it
// is the configured Bot API server's (its address, the token, the path
// getFile gave), so it needs no bridge.FetchPolicy — a local
// telegram-bot-api on loopback keeps working, and no sender can name
// another address.
func (a *Adapter) fetch(ctx context.Context, fileID string, max int64) ([]byte, error) {
	b := a.current()
	if b == nil {
		return nil, bridge.ErrOffline
	}
	f, err := b.GetFile(ctx, &tgbot.GetFileParams{FileID: fileID})
	if err != nil {
		return nil, err
	}
	if max > 0 && f.FileSize > max {
		return nil, fmt.Errorf("%d bytes, over %d", f.FileSize, max)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.FileDownloadLink(f), nil)
	if err != nil {
		return nil, err
	}
	resp, err := a.o.HTTPClient.Do(req)
	if err != nil {
		return nil, errors.New("download failed") // the URL holds the token: never in an error
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("download: HTTP %d", resp.StatusCode)
	}
	if max <= 0 {
		max = 20 << 20
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("over %d bytes", max)
	}
	return data, nil
}

// Send implements bridge.Adapter with sendMessage.
func (a *Adapter) Send(ctx context.Context, chat bridge.Chat, m bridge.Outgoing) (string, error) {
	b := a.current()
	if b == nil {
		return "", bridge.ErrOffline
	}
	if len(m.Parts) == 1 && m.Parts[0].Kind == bridge.PartVoice {
		return a.sendVoice(ctx, b, chat, m.Parts[0])
	}
	text, ents, reply := render(m)
	if strings.TrimSpace(text) == "" {
		return "", &bridge.SendError{Msg: "nothing to send"}
	}
	p := &tgbot.SendMessageParams{ChatID: chat.ID, MessageThreadID: thread(chat), Text: text, Entities: ents}
	if reply > 0 {
		p.ReplyParameters = &models.ReplyParameters{MessageID: reply, AllowSendingWithoutReply: true}
	}
	ctx, cancel := context.WithTimeout(ctx, a.o.SendTimeout)
	defer cancel()
	msg, err := b.SendMessage(ctx, p)
	if err != nil {
		return "", sendError(err)
	}
	return strconv.Itoa(msg.ID), nil
}

// VoiceFormat is the format sendVoice takes as a voice message: OGG with
// Opus (the Bot API's sendVoice: other formats may be sent as an audio
// or a document instead).
func (a *Adapter) VoiceFormat() string { return "audio/ogg" }

// sendVoice uploads a voice message (OGG/Opus).
func (a *Adapter) sendVoice(ctx context.Context, b *tgbot.Bot, chat bridge.Chat, p bridge.OutPart) (string, error) {
	if len(p.Audio) == 0 {
		return "", &bridge.SendError{Msg: "nothing to send"}
	}
	params := &tgbot.SendVoiceParams{ChatID: chat.ID, MessageThreadID: thread(chat),
		Voice: &models.InputFileUpload{Filename: "voice.ogg", Data: bytes.NewReader(p.Audio)}}
	ctx, cancel := context.WithTimeout(ctx, a.o.SendTimeout)
	defer cancel()
	msg, err := b.SendVoice(ctx, params)
	if err != nil {
		return "", sendError(err)
	}
	return strconv.Itoa(msg.ID), nil
}

// DefaultSendTimeout bounds one sendMessage: far past the seconds the Bot
// API takes when Telegram is slow, so a late answer is waited for.
const DefaultSendTimeout = 50 * time.Second

// sendError says what a failed send means. A retry of sendMessage cannot
// be made idempotent, so only the errors that prove nothing was sent are
// tried again: a 429 (telegram-bot-api answers it before the message is
// sent: Query::set_retry_after_error), a refused connection; a 400/403 is
// the Bot API's refusal, nothing sent. Any other failure — a timeout, a
// connection cut after the request, a 5xx from a proxy — leaves the
// outcome unknown (the message may be in the chat): the bridge does not
// send it again. A group upgraded to a supergroup (400 "Bad Request: group
// chat was upgraded to a supergroup chat" with parameters.
// migrate_to_chat_id, telegram-bot-api Client.cpp check_chat_access,
// commit 01a3679) is a move; "not enough rights to send text messages"
// (the bot restricted in the group) a mute with no known end.
func sendError(err error) error {
	var tm *tgbot.TooManyRequestsError
	var mig *tgbot.MigrateError
	var op *net.OpError
	switch {
	case errors.As(err, &mig):
		return &bridge.SendError{MovedTo: strconv.FormatInt(int64(mig.MigrateToChatID), 10), Msg: err.Error()}
	case errors.As(err, &tm):
		return &bridge.SendError{Temporary: true, RetryAfter: time.Duration(tm.RetryAfter) * time.Second, Msg: "rate limited by Telegram"}
	case errors.Is(err, tgbot.ErrorBadRequest) && tooLong(err.Error()):
		return &bridge.SendError{TooLong: true, Msg: err.Error()}
	case (errors.Is(err, tgbot.ErrorBadRequest) || errors.Is(err, tgbot.ErrorForbidden)) && noRights(err.Error()):
		return &bridge.SendError{Muted: true, Msg: err.Error()}
	case errors.Is(err, tgbot.ErrorForbidden), errors.Is(err, tgbot.ErrorBadRequest), errors.Is(err, tgbot.ErrorUnauthorized),
		errors.Is(err, tgbot.ErrorNotFound), errors.Is(err, tgbot.ErrorConflict):
		return &bridge.SendError{Msg: err.Error()}
	case errors.As(err, &op) && op.Op == "dial":
		return &bridge.SendError{Temporary: true, Msg: err.Error()}
	}
	return &bridge.SendError{Unknown: true, Msg: err.Error()}
}

// noRights reports the Bot API's refusal to a bot that may not write in
// the chat: "not enough rights to send text messages to the chat"
// (TDLib's can_send_message, as telegram-bot-api passes it on: 400 "Bad
// Request: …", or 403 "Forbidden: …") and "have no rights to send a
// message".
func noRights(desc string) bool {
	d := strings.ToLower(desc)
	return strings.Contains(d, "not enough rights to send") || strings.Contains(d, "have no rights to send") ||
		strings.Contains(d, "chat_write_forbidden")
}

// restricted tells the sink when an admin takes or gives back the bot's
// right to send in a group: the my_chat_member update (sent by default)
// with the bot's new status — "restricted" without can_send_messages until
// until_date (0: for ever) is a mute; "member", "administrator" or a
// restriction that lets it send ends it (telegram-bot-api Client.cpp
// JsonChatMember, commit 01a3679).
func restricted(u *models.Update, sink bridge.Sink) {
	ce, ok := sink.(bridge.ChatEvents)
	if !ok || u == nil || u.MyChatMember == nil {
		return
	}
	cm := u.MyChatMember
	if cm.Chat.Type != models.ChatTypeGroup && cm.Chat.Type != models.ChatTypeSupergroup {
		return
	}
	chat := bridge.Chat{Kind: bridge.Group, ID: strconv.FormatInt(cm.Chat.ID, 10)}
	switch m := cm.NewChatMember; {
	case m.Restricted != nil && !m.Restricted.CanSendMessages:
		var until time.Time
		if m.Restricted.UntilDate > 0 {
			until = time.Unix(int64(m.Restricted.UntilDate), 0)
		}
		ce.Muted(chat, until)
	case m.Restricted != nil, m.Member != nil, m.Administrator != nil, m.Owner != nil:
		ce.Unmuted(chat)
	}
}

// migrated tells the sink of a group's upgrade to a supergroup from the
// service messages: migrate_to_chat_id in the old group, and
// migrate_from_chat_id in the new supergroup (telegram-bot-api Client.cpp
// JsonMessage, messageChatUpgradeTo / messageChatUpgradeFrom).
func migrated(u *models.Update, sink bridge.Sink) {
	ce, ok := sink.(bridge.ChatEvents)
	if !ok || u == nil || u.Message == nil {
		return
	}
	m := u.Message
	switch {
	case m.MigrateToChatID != 0:
		ce.Moved(bridge.Chat{Kind: bridge.Group, ID: strconv.FormatInt(m.Chat.ID, 10)}, strconv.FormatInt(m.MigrateToChatID, 10))
	case m.MigrateFromChatID != 0:
		ce.Moved(bridge.Chat{Kind: bridge.Group, ID: strconv.FormatInt(m.MigrateFromChatID, 10)}, strconv.FormatInt(m.Chat.ID, 10))
	}
}

// Typing implements bridge.Adapter with sendChatAction "typing".
func (a *Adapter) Typing(ctx context.Context, chat bridge.Chat) error {
	b := a.current()
	if b == nil {
		return bridge.ErrOffline
	}
	_, err := b.SendChatAction(ctx, &tgbot.SendChatActionParams{ChatID: chat.ID, MessageThreadID: thread(chat), Action: models.ChatActionTyping})
	return err
}

// thread is the forum topic a chat's messages go to (0: none).
func thread(chat bridge.Chat) int {
	n, _ := strconv.Atoi(chat.Thread)
	return n
}

// MaxText is the most a message's text may hold after entity parsing, and
// MaxCaption a caption's: the Bot API's sendMessage and caption limits
// (tdlib/td td/telegram/OptionManager.cpp message_text_length_max 4096 and
// message_caption_length_max 1024, commit 022d602). TDLib counts code
// points; Telegram's servers and the Bot API docs count UTF-16 code units,
// the stricter measure, which the bridge uses.
const (
	MaxText    = 4096
	MaxCaption = 1024
)

// Limit implements bridge.Limited: 4096 UTF-16 code units of text (the
// bridge sends text only, never captions).
func (a *Adapter) Limit() bridge.Limit {
	return bridge.Limit{Max: MaxText, Units: func(r rune) int {
		if r >= 0x10000 {
			return 2
		}
		return 1
	}}
}

var _ bridge.Limited = (*Adapter)(nil)

// tooLong reports a Bot API refusal for length: "Bad Request: message is
// too long" (tdlib/td td/telegram/MessageContent.cpp "Message is too long",
// lower-cased by telegram-bot-api Client.cpp fail_query_with_error,
// commits 022d602 and 01a3679) and its caption and text variants.
func tooLong(desc string) bool {
	d := strings.ToLower(desc)
	return strings.Contains(d, "message is too long") || strings.Contains(d, "caption is too long") ||
		strings.Contains(d, "text is too long") || strings.Contains(d, "message_too_long")
}
