package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/api"
	"github.com/cyan-agent/cyan/bridge"
	"github.com/cyan-agent/cyan/clock"
	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/events"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/mainvirtual"
	"github.com/cyan-agent/cyan/observer"
	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/registry"
	"github.com/cyan-agent/cyan/router"
	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/supervise"
	"github.com/cyan-agent/cyan/tools"
	"github.com/cyan-agent/cyan/turn"
)

// bridgeParts are the chat-app bridges of the System.
type bridgeParts struct {
	list []*bridge.Bridge
	// permanent classifies each bridge's errors by its platform
	// (bridge.Platform.Permanent), by bridge name.
	permanent map[string]func(error) (string, bool)
	mounts    map[string]http.Handler // what the platforms serve on the API's server
	// owners are permissions.owners; send tells one of them something in
	// their private chat on a bridge (alert).
	owners func() []string
	send   func(br *bridge.Bridge, user, text string) error
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

// buildBridges makes one bridge per configured instance of every
// registered platform (package registry; the platforms this build has are
// imported in platforms.go), each a component of the router subscribed to
// its channels ("<name>:*"), whose outbox keeps the replies and proactive
// messages of its chats while it is away. The subscriptions of bridges no
// longer configured are dropped with what waited in them.
func (d *Daemon) buildBridges(cfg *config.Config, clk clock.Clock, log *slog.Logger) (*bridgeParts, error) {
	bp := &bridgeParts{permanent: map[string]func(error) (string, bool){}, mounts: map[string]http.Handler{}}
	owners := append([]string(nil), cfg.Permissions.Owners...)
	bp.owners = func() []string { return owners }
	bp.send = func(br *bridge.Bridge, user, text string) error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		chat := bridge.Chat{Kind: bridge.Private, ID: user}
		if err := d.mv.Note(ctx, chat.Channel(br.Name()), string(bridge.Private), text); err != nil {
			log.Warn("could not note an alert for the owner", "bridge", br.Name(), "err", err)
		}
		return br.Tell(ctx, chat, text)
	}
	agent := bridgeAgent{StoreHistory: bridge.StoreHistory{Store: d.store, Now: clk.Now}, mv: d.mv, reg: d.tools.reg, topics: d.events, now: clk.Now}
	configured := map[string]bool{}
	add := func(in bridge.Instance) error {
		sub := bridgeSubscriber(in.Name)
		configured[sub] = true
		if err := d.router.Subscribe(sub, []string{in.Name + ":*"}); err != nil {
			return err
		}
		sent, err := bridge.NewStoreSent(d.store, in.Name)
		if err != nil {
			return err
		}
		resume := time.Duration(cfg.Bridges.ResumeMaxAge)
		if resume == 0 {
			resume = -1 // none
		}
		b, err := bridge.New(bridge.Options{Name: in.Name, Adapter: in.Adapter, Agent: agent,
			Attach: func(ctx context.Context, c router.Component) error {
				return d.router.AttachLanes(ctx, sub, c, router.ByChannel)
			},
			Owed: bridge.NewStoreOwed(d.store, in.Name), ResumeMaxAge: resume, Who: bridge.NewStoreWho(d.store, in.Name),
			Undelivered: bridge.NewStoreUndelivered(d.store, in.Name), Paused: bridge.NewStorePaused(d.store, in.Name),
			Sent: sent, Queue: func() int { return d.routerPending(sub) }, Journal: d.store.Journal(),
			Manners: cfg.Bridges.Manners.Over(in.Manners), AgentName: d.mv.AgentName, DataDir: cfg.DataDir, Clock: clk,
			DiskFree: d.store.DiskFree, MediaFloor: uint64(cfg.Store.MinFreeMB)<<20 + bridge.MediaHeadroom,
			SilentAfter: time.Duration(cfg.Bridges.SilentAfter), Alert: func(text string) { bp.alert(in.Name, text) },
			Logger: log.With("component", "bridge", "bridge", in.Name), Moves: bridge.NewStoreMoves(d.store, in.Name),
			Voiced: d.bridgeVoiced, Voice: d.bridgeVoice, VoiceMode: d.bridgeMode})
		if err != nil {
			return err
		}
		bp.list = append(bp.list, b)
		return nil
	}
	env := bridge.Env{Addr: cfg.Addr, Clock: clk, Logger: log.With("component", "bridge")}
	for _, p := range registry.Platforms() {
		sec := cfg.Bridges.Section(p.Key)
		if sec == nil {
			continue
		}
		plat, ok := sec.(bridge.Platform)
		if !ok {
			return nil, fmt.Errorf("daemon: platform %s registers a section that is no bridge.Platform", p.Key)
		}
		built, err := plat.Build(env)
		if err != nil {
			return nil, fmt.Errorf("daemon: bridges.%s: %w", p.Key, err)
		}
		for _, in := range built.Instances {
			bp.permanent[in.Name] = plat.Permanent
			if err := add(in); err != nil {
				return nil, err
			}
		}
		for path, h := range built.Mount {
			if _, taken := bp.mounts[path]; taken {
				return nil, fmt.Errorf("daemon: bridges.%s serves %s, which another platform serves already", p.Key, path)
			}
			bp.mounts[path] = h
		}
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
// that fails is restarted with backoff, or after the wait its adapter
// asked for (supervise.RetryAfter: OneBot's forward dialer, Telegram's
// retry_after), the others keep running; one whose
// error its platform calls permanent (a token the platform refuses) is not
// restarted (cyan doctor explains) and its outbox keeps what it should
// send until it runs again.
func (b *bridgeParts) parts() []supervise.Part {
	var out []supervise.Part
	for _, br := range b.list {
		permanent := b.permanent[br.Name()]
		out = append(out, supervise.Part{Name: bridgeSubscriber(br.Name()), Run: func(ctx context.Context) error {
			err := br.Run(ctx)
			if fix, ok := permanent(err); ok && err != nil {
				return supervise.Done(fmt.Errorf("%w; %s", err, fix))
			}
			return err
		}})
	}
	return out
}

// mount is what the bridges serve on the API's server (the OneBot reverse
// WebSocket, the Telegram webhooks …). Each checks credentials of its own
// (an access token, a webhook secret); the API's guard still refuses other
// origins and foreign hosts on them.
func (b *bridgeParts) mount() map[string]http.Handler { return b.mounts }

// doors open the mounted paths to their own credentials instead of the
// API token.
func (b *bridgeParts) doors() []api.Door {
	var out []api.Door
	for path := range b.mount() {
		out = append(out, api.Door{Path: path, Access: api.OwnAuth})
	}
	return out
}

// bridgeAgent is the companion as a bridge sees it: main-virtual for
// turns and notes, the owners, and the stored conversation
// (bridge.StoreHistory: quotes, answered turns, recalls).
type bridgeAgent struct {
	bridge.StoreHistory
	mv     *mainvirtual.MainVirtual
	reg    *tools.Registry
	topics topicCloser
	now    func() time.Time
}

// topicCloser closes a channel's open topic (the event log).
type topicCloser interface {
	CloseTopic(channel, title string, now time.Time) (*events.Event, error)
}

var (
	_ bridge.Agent       = bridgeAgent{}
	_ bridge.Recaller    = bridgeAgent{}
	_ bridge.Quoter      = bridgeAgent{}
	_ bridge.Editor      = bridgeAgent{}
	_ bridge.OwnRecaller = bridgeAgent{}
	_ bridge.Resetter    = bridgeAgent{}
)

// Reset starts a new topic in a channel (/reset): the open topic closes
// (it becomes an event record, remembered and recallable) and a
// bridge.ResetNote line marks where the context starts now (resetStart).
func (a bridgeAgent) Reset(ctx context.Context, channel string, kind bridge.Kind, by string) error {
	if a.topics != nil {
		if _, err := a.topics.CloseTopic(channel, "", a.now()); err != nil {
			return err
		}
	}
	return a.mv.Note(ctx, channel, string(kind), bridge.ResetNote(by))
}

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

func (a bridgeAgent) Owner(speakerID string) bool {
	return a.reg.IsOwner(packets.Caller{SpeakerID: speakerID, Kind: "group"})
}

// visionImages is main-virtual's image hook: the bridges' kept images when
// the model accepts images (llm.vision), else none.
func visionImages(cfg *config.Config) func(string) []llm.Image {
	if !cfg.LLM.Vision {
		return nil
	}
	return bridge.Images(cfg.DataDir, mainvirtual.MaxImages)
}

// resetScan bounds how far back a turn looks for the newest /reset line.
const resetScan = 256

// resetStart is the context start of main-virtual: the event log's (the
// previous topic's first message), or the newest /reset line of the
// channel (bridge.ResetNote) when that is later — after /reset the
// context begins there; what came before stays stored and recallable.
type resetStart struct {
	inner mainvirtual.ContextStarter
	store *store.Store
}

func (r resetStart) ContextStart(ctx context.Context, channel string, now time.Time) (string, error) {
	start, err := r.inner.ContextStart(ctx, channel, now)
	marks, rerr := r.store.Recent(channel, store.Window{Limit: 1, MaxScan: resetScan, Keep: func(m *store.Message) bool {
		return m.Role == store.RoleSystem && bridge.IsResetNote(m.Text)
	}})
	if rerr != nil || len(marks) == 0 {
		return start, err
	}
	if mark := marks[0].ID; start == "" || mark > start {
		return mark, nil // ids sort by time
	}
	return start, err
}

// pausedWaker is main-virtual as the observers wake it, holding back the
// turns an observer begins on its own (as.Component set: proactive speech)
// in a chat whose owner paused unasked speech there (/pause). Plans fire.
type pausedWaker struct {
	mv     observer.Waker
	paused func(channel string) bool
	log    *slog.Logger
}

func (w pausedWaker) ProactiveAs(ctx context.Context, channel, kind, note string, as *turn.Principal, l turn.Listener) (*turn.Result, error) {
	if as != nil && as.Component != "" && w.paused(channel) {
		w.log.Info("unasked speech held back: the owner paused it in this chat (/pause)", "channel", channel, "component", as.Component)
		return &turn.Result{}, nil
	}
	return w.mv.ProactiveAs(ctx, channel, kind, note, as, l)
}

// paused reports whether a bridge's owner paused unasked speech in the
// channel.
func (b *bridgeParts) paused(channel string) bool {
	if b == nil {
		return false
	}
	for _, br := range b.list {
		if br.Paused(channel) {
			return true
		}
	}
	return false
}

// alert tells the owner, through another bridge's private chat with them,
// that a bridge's account went offline. Owners are permissions.owners'
// "id:<bridge>:<user id>" entries; the first on another bridge gets it,
// as a note in that chat the agent reads and a message sent now.
func (b *bridgeParts) alert(from, text string) {
	if b.owners == nil || b.send == nil {
		return
	}
	for _, id := range b.owners() {
		name, user, ok := strings.Cut(strings.TrimPrefix(id, "id:"), ":")
		if !ok || name == from || user == "" || !strings.HasPrefix(id, "id:") {
			continue
		}
		for _, br := range b.list {
			if br.Name() == name {
				if err := b.send(br, user, text); err == nil {
					return
				}
			}
		}
	}
}
