package cmd

import (
	"fmt"
	"strings"

	"github.com/cyan-agent/cyan/api"
	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/supervise"
)

// checkParts reports the running daemon's parts (GET /healthz): one line
// when all run, a line for each that restarts, failed or stopped with an
// error, and one for each outgoing component (bridge, voice, page) that
// is behind. Nothing when no daemon answers (the data dir check says so).
func checkParts(cfg *config.Config) []check {
	var h api.Health
	if err := newClient(cfg).do("GET", "/healthz", nil, &h); err != nil || len(h.Parts) == 0 {
		return nil
	}
	var out []check
	running := 0
	for _, p := range h.Parts {
		switch {
		case p.State == supervise.Running:
			running++
		case p.State == supervise.Restarting:
			out = append(out, check{name: "part", warn: true,
				msg: fmt.Sprintf("%s is restarting (%d restarts; next try %s): %s", p.Name, p.Restarts, localTime(p.Retry), p.LastError),
				fix: "the daemon's log has the whole error; the part is retried with backoff meanwhile"})
		case p.LastError != "":
			out = append(out, check{name: "part", warn: true, msg: fmt.Sprintf("%s is %s: %s", p.Name, p.State, p.LastError),
				fix: "see the daemon's log; a restart of the daemon tries it again"})
		}
	}
	names := make([]string, 0, len(h.Components))
	for _, c := range h.Components {
		names = append(names, c.Name)
		if c.Pending > 0 && (!c.Attached || c.Retrying) {
			out = append(out, check{name: "output", warn: true,
				msg: fmt.Sprintf("%s has %d messages waiting (attached %v): %s", c.Name, c.Pending, c.Attached, c.LastError),
				fix: "they are delivered, in order, once the component is back"})
		}
	}
	msg := fmt.Sprintf("%d of %d parts running", running, len(h.Parts))
	if len(names) > 0 {
		msg += "; outputs: " + strings.Join(names, ", ")
	}
	return append([]check{{name: "parts", ok: running == len(h.Parts), warn: running != len(h.Parts), msg: msg}}, out...)
}
