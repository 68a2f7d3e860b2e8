package daemon

import (
	"log/slog"
	"time"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/observer"
)

// observers are the observer manager and main-observer on it (package
// observer holds its work: after each turn, plans, speech, the persona's
// observers).
type observers struct {
	m    *observer.Manager
	main *observer.Main
}

// buildObservers wires main-observer to memory, the store, the scripts,
// the permissions and main-virtual.
func (d *Daemon) buildObservers(m *observer.Manager, cfg *config.Config, agent func() string, now func() time.Time, log *slog.Logger) (*observers, error) {
	main, err := observer.NewMain(observer.MainOptions{Manager: m, Memory: d.mem, Store: d.store, Scripts: d.scripts,
		Perms: d.tools.reg, Waker: pausedWaker{mv: d.mv, paused: func(ch string) bool { return d.bridges.paused(ch) }, log: log.With("component", "observer")}, Agent: agent, Config: cfg.Observers, Logger: log.With("component", "observer"), Now: now})
	if err != nil {
		return nil, err
	}
	return &observers{m: m, main: main}, nil
}
