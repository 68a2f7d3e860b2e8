package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/api"
	"github.com/cyan-agent/cyan/bridge"
	"github.com/cyan-agent/cyan/bridge/onebot"
	"github.com/cyan-agent/cyan/bridge/telegram"
	"github.com/cyan-agent/cyan/clock"
	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/mainvirtual"
	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/router"
	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/supervise"
	"github.com/cyan-agent/cyan/tools"
	"github.com/cyan-agent/cyan/turn"
)

// bridgeParts are the chat-app bridges of the System.
type bridgeParts struct {
	list    []*bridge.Bridge
	reverse http.Handler            // the OneBot reverse WebSocket, nil when none is reverse
	hooks   map[string]http.Handler // Telegram webhooks by path
}

// Status lists every bridge's state (GET /api/v1/bridges).
func (b *bridgeParts) Status() []bridge.Status {
	out := make([]bridge.Status, 0, len(b.list))
	for _, br := range b.list {
		out = append(out, br.Status())
	}
	return out
}

// bridgeSubscriber is a bridge's name at the router.
func bridgeSubscriber(name string) string { return "bridge:" + name }

// buildBridges makes one bridge per configured instance, each a component
// of the router subscribed to its channels ("<name>:*"), whose outbox
// keeps the replies and proactive messages of its chats while it is away.
// The subscriptions of bridges no longer configured are dropped with
// what waited in them.
func (d *Daemon) buildBridges(cfg *config.Config, clk clock.Clock, log *slog.Logger) (*bridgeParts, error) {
	bp := &bridgeParts{hooks: map[string]http.Handler{}}
	agent := bridgeAgent{mv: d.mv, reg: d.tools.reg, st: d.store}
	reverse := map[string]*onebot.Adapter{}
	configured := map[string]bool{}
	add := func(name string, ad bridge.Adapter, own *config.Manners) error {
		sub := bridgeSubscriber(name)
		configured[sub] = true
		if err := d.router.Subscribe(sub, []string{name + ":*"}); err != nil {
			return err
		}
		sent, err := bridge.NewStoreSent(d.store, name)
		if err != nil {
			return err
		}
		resume := time.Duration(cfg.Bridges.ResumeMaxAge)
		if resume == 0 {
			resume = -1 // none
		}
		b, err := bridge.New(bridge.Options{Name: name, Adapter: ad, Agent: agent,
			Attach: func(ctx context.Context, c router.Component) error { return d.router.Attach(ctx, sub, c) },
			Owed:   bridge.NewStoreOwed(d.store, name), ResumeMaxAge: resume, Who: bridge.NewStoreWho(d.store, name),
			Undelivered: bridge.NewStoreUndelivered(d.store, name),
			Sent:        sent, Queue: func() int { return d.routerPending(sub) }, Journal: d.store.Journal(),
			Manners: cfg.Bridges.Manners.Over(own), AgentName: d.mv.AgentName, DataDir: cfg.DataDir, Clock: clk,
			Logger: log.With("component", "bridge", "bridge", name)})
		if err != nil {
			return err
		}
		bp.list = append(bp.list, b)
		return nil
	}
	for _, o := range cfg.Bridges.OneBot {
		ad, err := onebot.New(onebot.Options{Name: o.Name, Mode: o.Mode, URL: o.URL, AccessToken: o.AccessToken, SelfID: o.SelfID,
			Format: o.MessageFormat, Reconnect: time.Duration(o.Reconnect), Timeout: time.Duration(o.Timeout), Clock: clk,
			Logger: log.With("component", "bridge", "bridge", o.Name)})
		if err != nil {
			return nil, err
		}
		if o.Mode == "reverse" {
			if o.AccessToken == "" && !loopback(cfg.Addr) {
				return nil, fmt.Errorf("daemon: bridges.onebot %s: a reverse bridge on a non-loopback address (%s) needs an access_token, or anyone who reaches it could speak as anyone", o.Name, cfg.Addr)
			}
			reverse[o.Name] = ad
		}
		if err := add(o.Name, ad, o.Manners); err != nil {
			return nil, err
		}
	}
	if len(reverse) > 0 {
		bp.reverse = onebot.NewReverseMux(log.With("component", "bridge"), reverse)
	}
	if err := d.buildTelegram(cfg, bp, add, clk, log); err != nil {
		return nil, err
	}
	for _, s := range d.router.Status() {
		if strings.HasPrefix(s.Name, bridgeSubscriber("")) && !configured[s.Name] {
			log.Info("a bridge is no longer configured; dropping its outbox", "subscriber", s.Name, "pending", s.Pending)
			if err := d.router.Unsubscribe(s.Name); err != nil {
				return nil, err
			}
		}
	}
	return bp, nil
}

// routerPending is how many packets wait in a component's outbox.
func (d *Daemon) routerPending(name string) int {
	for _, s := range d.router.Status() {
		if s.Name == name {
			return s.Pending
		}
	}
	return 0
}

// parts are the bridges as supervised parts ("bridge:<name>"): each keeps
// its platform connection and takes its packets from the router. A bridge
// that fails is restarted with backoff, the others keep running; one whose
// token the platform refuses is not restarted (cyan doctor explains) and
// its outbox keeps what it should send until it runs again.
func (b *bridgeParts) parts() []supervise.Part {
	var out []supervise.Part
	for _, br := range b.list {
		out = append(out, supervise.Part{Name: bridgeSubscriber(br.Name()), Run: func(ctx context.Context) error {
			err := br.Run(ctx)
			if errors.Is(err, telegram.ErrToken) {
				return supervise.Done(fmt.Errorf("%w; fix the token and restart (cyan doctor explains)", err))
			}
			return err
		}})
	}
	return out
}

// mount is what the bridges serve on the API's server: the OneBot reverse
// WebSocket and the Telegram webhooks. Each checks credentials of its own
// (an access token, a webhook secret); the API's guard still refuses other
// origins and foreign hosts on them.
func (b *bridgeParts) mount() map[string]http.Handler {
	m := map[string]http.Handler{}
	if b.reverse != nil {
		m[onebot.ReversePath] = b.reverse
		m[onebot.ReversePath+"/"] = b.reverse
	}
	for path, h := range b.hooks {
		m[path] = h
	}
	return m
}

// doors open the mounted paths to their own credentials instead of the
// API token.
func (b *bridgeParts) doors() []api.Door {
	var out []api.Door
	for path := range b.mount() {
		out = append(out, api.Door{Path: path, Access: api.OwnAuth})
	}
	return out
}

// imageRef is a kept image's reference, as the bridges write it.
var imageRef = regexp.MustCompile(`%\[(images/[a-z][a-z0-9_-]{0,31}/[0-9a-f]{24}\.(?:jpg|png|gif|webp|bmp))\]`)

// bridgeImages loads the images a message refers to, for a model that
// accepts them (llm.vision); only files the bridges kept can be named.
func bridgeImages(dataDir string) func(text string) []llm.Image {
	mimes := map[string]string{".jpg": "image/jpeg", ".png": "image/png", ".gif": "image/gif", ".webp": "image/webp", ".bmp": "image/bmp"}
	return func(text string) []llm.Image {
		var out []llm.Image
		for _, m := range imageRef.FindAllStringSubmatch(text, mainvirtual.MaxImages) {
			data, err := os.ReadFile(filepath.Join(dataDir, filepath.FromSlash(m[1])))
			if err != nil {
				continue
			}
			out = append(out, llm.Image{MIME: mimes[filepath.Ext(m[1])], Data: data, Ref: m[1]})
		}
		return out
	}
}

// bridgeAgent is the companion as a bridge sees it.
type bridgeAgent struct {
	mv  *mainvirtual.MainVirtual
	reg *tools.Registry
	st  *store.Store
}

var _ bridge.Agent = bridgeAgent{}

func (a bridgeAgent) Record(ctx context.Context, in bridge.Inbound) (string, error) {
	m, err := a.mv.Record(ctx, mainvirtual.Recorded{
		Incoming:   turn.Incoming{Channel: in.Channel, User: in.User, UserID: in.UserID, Kind: string(in.Kind), Text: in.Text},
		ExternalID: in.ExternalID, Time: in.Time,
	})
	if errors.Is(err, mainvirtual.ErrDuplicate) {
		return "", bridge.ErrDuplicate
	}
	if err != nil {
		return "", err
	}
	return m.ID, nil
}

func (a bridgeAgent) Answer(ctx context.Context, t bridge.Turn) error {
	_, err := a.mv.Respond(ctx, t.Channel, t.MessageID, t.Speaker, t.SpeakerID, string(t.Kind), turn.Listener{})
	var lim *turn.Limited
	if errors.As(err, &lim) {
		return &bridge.Later{After: lim.RetryAfter, Reason: lim.Reason}
	}
	return err
}

func (a bridgeAgent) Note(ctx context.Context, channel string, kind bridge.Kind, text string) error {
	return a.mv.Note(ctx, channel, string(kind), text)
}

// Quoted is the platform id of the message the stored message id quotes,
// when it is of the same chat.
func (a bridgeAgent) Quoted(id string) string {
	m, err := a.st.Get(id)
	if err != nil || len(m.Quotes) == 0 {
		return ""
	}
	q, err := a.st.Get(m.Quotes[0])
	if err != nil || q.Channel != m.Channel {
		return ""
	}
	return q.ExternalID
}

// Answered reports whether the agent spoke in the channel after the
// message: a final reply (one that calls no tool) or its choice to say
// nothing. A turn cut mid-way left at most tool calls and their results.
func (a bridgeAgent) Answered(channel, id string) bool {
	answered, n := false, 0
	err := a.st.Scan(channel, id, func(m *store.Message) (bool, error) {
		n++
		if m.Role == store.RoleAssistant && len(m.ToolCalls) == 0 {
			answered = true
			return false, nil
		}
		return n < 2000, nil
	})
	return err == nil && answered
}

// Recall marks a message withdrawn on its platform (bridge.Recaller).
func (a bridgeAgent) Recall(_ context.Context, channel, externalID string) error {
	_, err := a.st.MarkRecalled(channel, externalID, time.Now())
	if errors.Is(err, store.ErrNotFound) {
		return bridge.ErrNotStored
	}
	return err
}

// Quote finds the message a reply answers by its platform id
// (bridge.Quoter); a recalled one is named so, its text left out.
func (a bridgeAgent) Quote(channel, externalID string) (bridge.Quote, bool) {
	m, err := a.st.ByExternal(channel, externalID)
	if err != nil {
		return bridge.Quote{}, false
	}
	q := bridge.Quote{User: m.User, Time: m.Time.Local(), Text: m.Text}
	if m.IsRecalled() {
		q.Text = "(a recalled message)"
	}
	return q, true
}

func (a bridgeAgent) Owner(speakerID string) bool {
	return a.reg.IsOwner(packets.Caller{SpeakerID: speakerID, Kind: "group"})
}

// buildTelegram adds one bridge per Telegram bot; a webhook bot's
// endpoint is routed like the OneBot socket.
func (d *Daemon) buildTelegram(cfg *config.Config, bp *bridgeParts, add func(string, bridge.Adapter, *config.Manners) error, clk clock.Clock, log *slog.Logger) error {
	for _, t := range cfg.Bridges.Telegram {
		ad, err := telegram.New(telegram.Options{Name: t.Name, Token: t.Token, APIURL: t.APIURL, PollTimeout: time.Duration(t.PollTimeout),
			WebhookURL: t.Webhook.URL, WebhookSecret: t.Webhook.Secret, Clock: clk, Logger: log.With("component", "bridge", "bridge", t.Name)})
		if err != nil {
			return err
		}
		if t.Webhook.URL != "" {
			bp.hooks[telegram.WebhookPath(t.Name)] = ad.Webhook()
		}
		if err := add(t.Name, ad, t.Manners); err != nil {
			return err
		}
	}
	return nil
}

// visionImages is main-virtual's image hook: the bridges' kept images when
// the model accepts images (llm.vision), else none.
func visionImages(cfg *config.Config) func(string) []llm.Image {
	if !cfg.LLM.Vision {
		return nil
	}
	return bridgeImages(cfg.DataDir)
}
