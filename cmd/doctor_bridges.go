package cmd

import (
	"context"
	"time"

	"github.com/cyan-agent/cyan/api"
	"github.com/cyan-agent/cyan/bridge"
	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/registry"
)

// checkBridges asks each configured platform (package registry) to check
// its bridges (bridge.Platform.Doctor): through the running daemon's view
// when one answers, else by reaching the platform directly.
func checkBridges(cfg *config.Config, timeout time.Duration) []check {
	if len(cfg.Bridges.Names()) == 0 {
		return nil
	}
	env := bridge.DoctorEnv{Addr: cfg.Addr, Live: map[string]bridge.Status{}, Timeout: timeout}
	var out api.BridgeList
	env.Running = newClient(cfg).do("GET", "/api/v1/bridges", nil, &out) == nil
	for _, b := range out.Bridges {
		env.Live[b.Name] = b
	}
	var checks []check
	for _, p := range registry.Platforms() {
		sec := cfg.Bridges.Section(p.Key)
		if sec == nil {
			continue
		}
		plat, ok := sec.(bridge.Platform)
		if !ok {
			checks = append(checks, check{name: "bridges." + p.Key, msg: "the platform " + p.Key + " cannot be checked (its section is no bridge.Platform)"})
			continue
		}
		for _, c := range plat.Doctor(context.Background(), env) {
			checks = append(checks, check{name: c.Name, ok: c.OK, warn: c.Warn, msg: c.Msg, fix: c.Fix})
		}
	}
	return checks
}
