package api

import (
	"context"
	"net/http"

	"github.com/cyan-agent/cyan/store"
)

// Greeter opens an empty channel with the persona's greeting (main-virtual's
// Greet); an Agent without it has no greeting route.
type Greeter interface {
	Greet(ctx context.Context, channel, user, kind string) (*store.Message, error)
}

type greetingRequest struct {
	Channel string `json:"channel"`
	User    string `json:"user"`
	Kind    string `json:"kind"`
}

// greeting: POST /api/v1/greeting {channel, user} → {message}: a page
// opened on an empty channel asks for the character's greeting, which is
// stored once (and so shown and voiced once, through the stream); message
// is null when the channel is not empty or the persona has no greeting.
func (s *Server) greeting(w http.ResponseWriter, r *http.Request) {
	var req greetingRequest
	if !decodeBody(w, r, &req) {
		return
	}
	g, ok := s.o.Agent.(Greeter)
	if !ok {
		writeJSON(w, http.StatusOK, map[string]any{"message": nil})
		return
	}
	m, err := g.Greet(r.Context(), req.Channel, req.User, req.Kind)
	if err != nil {
		s.writeTurnError(w, r.Context(), err)
		return
	}
	if m == nil {
		writeJSON(w, http.StatusOK, map[string]any{"message": nil})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"message": Message{ID: m.ID, Role: string(m.Role), User: m.User, Text: m.Text, Time: m.Time, Proactive: m.Proactive}})
}
