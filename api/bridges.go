package api

import (
	"net/http"

	"github.com/cyan-agent/cyan/bridge"
)

// Bridges reports the chat-app bridges' state.
type Bridges interface {
	Status() []bridge.Status
}

// BridgeList is the answer of GET /api/v1/bridges.
type BridgeList struct {
	Bridges []bridge.Status `json:"bridges"`
}

// listBridges answers GET /api/v1/bridges: each bridge's state (connected,
// last error, chats seen, queue length, counters).
func (s *Server) listBridges(w http.ResponseWriter, _ *http.Request) {
	out := BridgeList{Bridges: []bridge.Status{}}
	if s.o.Bridges != nil {
		out.Bridges = append(out.Bridges, s.o.Bridges.Status()...)
	}
	writeJSON(w, http.StatusOK, out)
}
