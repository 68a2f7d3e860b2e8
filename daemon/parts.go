package daemon

import (
	"context"
	"net"
	"time"

	"github.com/cyan-agent/cyan/observer"
	"github.com/cyan-agent/cyan/router"
	"github.com/cyan-agent/cyan/supervise"
)

// parts puts every long-running part under one supervisor: a part that
// fails or panics is restarted with backoff; the HTTP server failing
// stops the daemon (supervise.Fatal); a watcher the system does not allow
// ends (supervise.Done) and the daemon goes on without it.
func (d *Daemon) parts(ln net.Listener) *supervise.Supervisor {
	sup := supervise.New(supervise.Options{Journal: d.store.Journal(), Backoff: d.restart, Clock: d.clock, Logger: d.root.With("component", "supervisor")})
	add := func(name string, run func(context.Context) error) { sup.Add(supervise.Part{Name: name, Run: run}) }
	add("api", func(ctx context.Context) error { return d.serve(ctx, ln) })
	if d.cfg.Persona != "" {
		add("persona-watch", d.watchPersona)
	}
	add("llm-check", d.checkLLM)
	add("observers", d.obs.m.Run)
	add("events", func(ctx context.Context) error { return d.events.Run(observer.WithAccount(ctx, eventsAccount)) })
	add("extra-tools", func(ctx context.Context) error {
		if err := d.tools.extras.Watch(ctx); err != nil {
			return supervise.Done(err)
		}
		return nil
	})
	for _, s := range d.tools.mcp.Parts() {
		add("mcp:"+s.Name, s.Run)
	}
	add("recall", d.recall.Run)
	add("import-events", func(ctx context.Context) error { return d.imports.Run(observer.WithAccount(ctx, eventsAccount)) })
	add("approvals", func(ctx context.Context) error { return d.tools.reg.Approvals().Run(ctx, time.Minute) })
	add("metrics", d.metrics.Follow(d.store.Journal()).Run)
	add("router-feed", func(ctx context.Context) error { return d.router.Feed(ctx, d.store, d.store.Journal()) })
	if d.voice != nil {
		add("voice", d.runVoice)
		if len(d.cfg.TTS.Channels) > 0 {
			add("voice-follow", func(ctx context.Context) error { return d.voice.Follow(ctx, d.store.Journal(), router.ToolSpeak) })
		}
	}
	for _, p := range d.bridges.parts() {
		sup.Add(p)
	}
	for _, p := range d.extra {
		sup.Add(p)
	}
	d.mu.Lock()
	d.sup = sup
	d.mu.Unlock()
	return sup
}

// partStates is the supervisor's status for /healthz, empty before Run.
type partStates struct{ d *Daemon }

func (p partStates) Status() []supervise.State {
	p.d.mu.Lock()
	sup := p.d.sup
	p.d.mu.Unlock()
	if sup == nil {
		return nil
	}
	return sup.Status()
}
