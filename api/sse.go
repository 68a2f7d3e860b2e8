package api

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// sseWriter writes server-sent events. The headers go out with the first
// event, so a failure before it can still be a plain JSON error.
type sseWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	started bool
}

func newSSE(w http.ResponseWriter) (*sseWriter, bool) {
	return &sseWriter{w: w, rc: http.NewResponseController(w)}, true
}

func (s *sseWriter) start() {
	if s.started {
		return
	}
	s.started = true
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	s.w.WriteHeader(http.StatusOK)
}

// event writes one named event with a JSON payload ("" name: data only).
func (s *sseWriter) event(name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.raw(name, string(b))
}

// eventID writes one event with an id (the client's Last-Event-ID).
func (s *sseWriter) eventID(id, name string, v any) error {
	s.start()
	if _, err := fmt.Fprintf(s.w, "id: %s\n", id); err != nil {
		return err
	}
	return s.event(name, v)
}

func (s *sseWriter) raw(name, data string) error {
	s.start()
	if name != "" {
		if _, err := fmt.Fprintf(s.w, "event: %s\n", name); err != nil {
			return err
		}
	}
	if _, err := fmt.Fprintf(s.w, "data: %s\n\n", data); err != nil {
		return err
	}
	return s.rc.Flush()
}
