package api

import (
	"net/http"

	"github.com/cyan-agent/cyan/bridge"
)

// Bridges reports the chat-app bridges' state.
type Bridges interface {
	Status() []bridge.Status
}

// listBridges answers GET /api/v1/bridges: each bridge's state (connected,
// last error, chats seen, queue length, counters).
func (s *Server) listBridges(w http.ResponseWriter, _ *http.Request) {
	list := []bridge.Status{}
	if s.o.Bridges != nil {
		list = s.o.Bridges.Status()
	}
	writeJSON(w, http.StatusOK, map[string]any{"bridges": list})
}
