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
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/mainvirtual"
	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/registry"
	"github.com/cyan-agent/cyan/router"
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
	agent := bridgeAgent{StoreHistory: bridge.StoreHistory{Store: d.store, Now: clk.Now}, mv: d.mv, reg: d.tools.reg}
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
			Undelivered: bridge.NewStoreUndelivered(d.store, in.Name),
			Sent:        sent, Queue: func() int { return d.routerPending(sub) }, Journal: d.store.Journal(),
			Manners: cfg.Bridges.Manners.Over(in.Manners), AgentName: d.mv.AgentName, DataDir: cfg.DataDir, Clock: clk,
			DiskFree: d.store.DiskFree, MediaFloor: uint64(cfg.Store.MinFreeMB)<<20 + bridge.MediaHeadroom,
			Logger: log.With("component", "bridge", "bridge", in.Name), Moves: bridge.NewStoreMoves(d.store, in.Name)})
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
	mv  *mainvirtual.MainVirtual
	reg *tools.Registry
}

var (
	_ bridge.Agent    = bridgeAgent{}
	_ bridge.Recaller = bridgeAgent{}
	_ bridge.Quoter   = bridgeAgent{}
)

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
