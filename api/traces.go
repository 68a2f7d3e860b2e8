package api

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/cyan-agent/cyan/generate"
	"github.com/cyan-agent/cyan/store"
)

// Limits of GET /api/v1/traces.
const (
	defaultTraceList = 20
	maxTraceList     = 1000
)

// listTraces lists the newest generate traces, oldest first:
// ?channel=C&name=N&last=N.
func (s *Server) listTraces(w http.ResponseWriter, r *http.Request) {
	if s.o.Traces == nil {
		writeError(w, http.StatusNotFound, "not_found", "this daemon keeps no generate traces")
		return
	}
	q := r.URL.Query()
	f := generate.Filter{Channel: q.Get("channel"), Name: q.Get("name"), Last: defaultTraceList}
	if f.Channel != "" {
		if err := store.ValidChannel(f.Channel); err != nil {
			writeError(w, http.StatusBadRequest, "invalid_request", "channel: "+err.Error())
			return
		}
	}
	if v := q.Get("last"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxTraceList {
			writeError(w, http.StatusBadRequest, "invalid_request", fmt.Sprintf("last must be a number from 1 to %d", maxTraceList))
			return
		}
		f.Last = n
	}
	list, err := s.o.Traces.List(f)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "storage", err.Error())
		return
	}
	if list == nil {
		list = []generate.Summary{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"traces": list})
}

// getTrace returns one generate trace whole.
func (s *Server) getTrace(w http.ResponseWriter, r *http.Request) {
	if s.o.Traces == nil {
		writeError(w, http.StatusNotFound, "not_found", "this daemon keeps no generate traces")
		return
	}
	id := r.PathValue("id")
	t, err := s.o.Traces.Get(id)
	switch {
	case errors.Is(err, store.ErrInvalid):
		writeError(w, http.StatusBadRequest, "invalid_request", fmt.Sprintf("%q is not a trace id; GET /api/v1/traces lists them", id))
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("no trace %s: it never existed or the ring has dropped it (generate.traces sets how many are kept)", id))
	case err != nil:
		writeError(w, http.StatusInternalServerError, "storage", err.Error())
	default:
		writeJSON(w, http.StatusOK, t)
	}
}
