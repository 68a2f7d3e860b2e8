package api

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/packets"
)

// Observers is what the API needs of the observer manager.
type Observers interface {
	Status() []packets.ObserverStatus
	Call(ctx context.Context, name string) error
}

// listObservers: GET /api/v1/observers.
func (s *Server) listObservers(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, ObserverList{Observers: s.o.Observers.Status()})
}

// callObserver: POST /api/v1/observers/{name}/run — the call trigger; it
// answers when the run is over (a minute at most).
func (s *Server) callObserver(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), time.Minute)
	defer cancel()
	name := r.PathValue("name")
	err := s.o.Observers.Call(ctx, name)
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "observer": name})
	case strings.Contains(err.Error(), "no observer named"):
		writeError(w, http.StatusNotFound, "not_found", err.Error())
	default:
		writeError(w, http.StatusBadGateway, "observer_failed", "observer "+name+" ran and failed: "+err.Error())
	}
}
