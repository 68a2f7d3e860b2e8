package api

import (
	"errors"
	"net/http"

	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/router"
	"github.com/cyan-agent/cyan/store"
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

// Model is the watched LLM client as /healthz reads it (llm.Watched).
type Model interface {
	Down() *llm.Down
}

// Health is the answer of GET /healthz.
type Health struct {
	// OK is true while the daemon serves; Degraded when it serves but
	// something needs the owner: a part restarting or stopped with an
	// error, writes refused (a full disk, a removed data folder),
	// messages missing since the last start, the model unreachable.
	OK       bool `json:"ok"`
	Degraded bool `json:"degraded,omitempty"`
	// Status is "ok" or "degraded"; Reasons say why it is degraded, each
	// "kind: what is wrong and what to do".
	Status     string            `json:"status"`
	Reasons    []string          `json:"reasons,omitempty"`
	Version    string            `json:"version"`
	Parts      []supervise.State `json:"parts,omitempty"`
	Components []router.Status   `json:"components,omitempty"`
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	h := Health{OK: true, Version: s.o.Version}
	if s.o.Parts != nil {
		h.Parts = s.o.Parts.Status()
		for _, p := range h.Parts {
			switch {
			case p.State == supervise.Restarting || p.State == supervise.Failed:
				h.Reasons = append(h.Reasons, "part_"+p.State+": "+p.Name+" "+p.State)
			case p.LastError != "" && p.State == supervise.Stopped:
				h.Reasons = append(h.Reasons, "part_stopped: "+p.Name+" stopped with an error")
			}
		}
	}
	if s.o.Components != nil {
		h.Components = s.o.Components.Status()
	}
	h.Reasons = append(h.Reasons, storeReasons(s.o.Store)...)
	if s.o.Model != nil {
		if d := s.o.Model.Down(); d != nil {
			h.Reasons = append(h.Reasons, "model_unreachable: "+d.String())
		}
	}
	h.Degraded = len(h.Reasons) > 0
	h.Status = "ok"
	if h.Degraded {
		h.Status = "degraded"
	}
	writeJSON(w, http.StatusOK, h)
}

// storeReasons says what keeps the store from taking writes, or what it
// found missing at open. /healthz is public, so no path is named.
func storeReasons(st *store.Store) []string {
	if st == nil {
		return nil
	}
	var out []string
	err := st.Writable()
	switch {
	case errors.Is(err, store.ErrDiskFull):
		out = append(out, "disk_full: writes are refused (507): the data dir's disk has less free space than store.min_free_mb; free some space there and writes resume by themselves")
	case errors.Is(err, store.ErrDataDirGone):
		out = append(out, "data_dir_gone: writes are refused (503): the data folder was removed while cyan ran; stop cyan and restore it (cyan restore BACKUP)")
	}
	if short := st.Shortfall(); short != nil {
		out = append(out, "messages_missing: "+short.String())
	}
	return out
}
