package api

import (
	"net/http"

	"github.com/cyan-agent/cyan/router"
	"github.com/cyan-agent/cyan/supervise"
)

// Parts is the daemon's supervisor as /healthz reads it.
type Parts interface {
	Status() []supervise.State
}

// Components is the router as /healthz reads it.
type Components interface {
	Status() []router.Status
}

// Health is the answer of GET /healthz.
type Health struct {
	// OK is true while the daemon serves; Degraded when a part is
	// restarting or has stopped with an error.
	OK         bool              `json:"ok"`
	Degraded   bool              `json:"degraded,omitempty"`
	Version    string            `json:"version"`
	Parts      []supervise.State `json:"parts,omitempty"`
	Components []router.Status   `json:"components,omitempty"`
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	h := Health{OK: true, Version: s.o.Version}
	if s.o.Parts != nil {
		h.Parts = s.o.Parts.Status()
		for _, p := range h.Parts {
			h.Degraded = h.Degraded || p.State == supervise.Restarting || p.State == supervise.Failed || p.LastError != "" && p.State == supervise.Stopped
		}
	}
	if s.o.Components != nil {
		h.Components = s.o.Components.Status()
	}
	writeJSON(w, http.StatusOK, h)
}
