package bridge

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/cyan-agent/cyan/clock"
	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/registry"
)

// Platform is a chat platform's configuration section as the layers above
// config see it: the value its package registers (registry.Platform.New)
// is a registry.Section — decoded, checked and printed by config — and
// also this, which the daemon builds from and cmd's doctor checks with.
// A platform package holds the whole declaration in one file, with the
// guard `var _ bridge.Platform = (*Section)(nil)`.
type Platform interface {
	registry.Section
	// Build makes an adapter for each instance, and the handlers the
	// platform serves on the API's server (a reverse WebSocket, webhooks).
	Build(env Env) (Built, error)
	// Doctor checks each instance: through the running daemon's view
	// when there is one, else by reaching the platform itself; one Check
	// per instance, named "bridge <name>".
	Doctor(ctx context.Context, env DoctorEnv) []Check
	// Permanent says whether err, returned by an instance's Run, is one a
	// restart cannot mend (the platform refused the token): then fix says
	// what to do, and the bridge is not restarted until the daemon is.
	Permanent(err error) (fix string, ok bool)
}

// Env is what a platform is built with.
type Env struct {
	// Addr is the API's listen address: where a platform that connects
	// to cyan comes (a reverse WebSocket).
	Addr   string
	Clock  clock.Clock
	Logger *slog.Logger // "component=bridge"; each instance adds "bridge=<name>"
}

// Built is what a platform's section builds.
type Built struct {
	Instances []Instance
	// Mount are paths the platform serves on the API's server; each
	// checks credentials of its own (an access token, a webhook secret).
	Mount map[string]http.Handler
}

// Instance is one configured bridge of a platform: the daemon wraps its
// adapter in a Bridge.
type Instance struct {
	Name    string
	Adapter Adapter
	// Manners are the instance's own, over bridges.manners (nil: none).
	Manners *config.Manners
}

// DoctorEnv is what a platform's doctor check sees.
type DoctorEnv struct {
	Addr string // the API's listen address
	// Running: the daemon answered; Live are its bridges' states by name.
	Running bool
	Live    map[string]Status
	Timeout time.Duration // for one reach of the platform
}

// Check is one line of `cyan doctor`.
type Check struct {
	Name     string
	OK, Warn bool
	Msg, Fix string
}

// LastErrorNote is " (last error: …)", or "" when there is none.
func (s Status) LastErrorNote() string {
	if s.LastError == "" {
		return ""
	}
	return " (last error: " + s.LastError + ")"
}
