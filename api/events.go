package api

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/events"
	"github.com/cyan-agent/cyan/store"
)

// eventsLog returns the event log, or answers 503 when there is none.
func (s *Server) eventsLog(w http.ResponseWriter) *events.Log {
	if s.o.Events == nil {
		writeError(w, http.StatusServiceUnavailable, "unavailable", "the event log is not running in this daemon")
	}
	return s.o.Events
}

// listEvents answers GET /api/v1/events?level=L&channel=C&limit=N with the
// newest records (oldest first) and the rollups still pending.
func (s *Server) listEvents(w http.ResponseWriter, r *http.Request) {
	log := s.eventsLog(w)
	if log == nil {
		return
	}
	q := r.URL.Query()
	f := events.Filter{Channel: q.Get("channel"), Limit: 100}
	if lv := q.Get("level"); lv != "" {
		level, err := events.ParseLevel(lv)
		if err != nil {
			writeError(w, http.StatusBadRequest, "invalid_request", strings.TrimPrefix(err.Error(), "invalid: "))
			return
		}
		f.Level = level
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100000 {
			writeError(w, http.StatusBadRequest, "invalid_request", fmt.Sprintf("limit %q is not a number from 1 to 100000", v))
			return
		}
		f.Limit = n
	}
	now := s.o.Now()
	evs, err := log.Events(f, now)
	if err != nil {
		s.internal(w, err)
		return
	}
	pending, err := log.PendingRollups(now)
	if err != nil {
		s.internal(w, err)
		return
	}
	if f.Channel != "" || f.Level != "" {
		kept := pending[:0]
		for _, p := range pending {
			if (f.Channel == "" || p.Channel == f.Channel) && (f.Level == "" || p.Level == f.Level) {
				kept = append(kept, p)
			}
		}
		pending = kept
	}
	writeJSON(w, http.StatusOK, map[string]any{"events": evs, "pending": pending})
}

type rollupRequest struct {
	// Now is the time to run the rollups as of (RFC 3339); empty is now.
	Now string `json:"now"`
}

// rollup answers POST /api/v1/events/rollup: close the topics silent by
// then and run every due rollup as of now (failed ones too, without
// waiting for their backoff).
func (s *Server) rollup(w http.ResponseWriter, r *http.Request) {
	log := s.eventsLog(w)
	if log == nil {
		return
	}
	var req rollupRequest
	if r.ContentLength != 0 && !decodeBody(w, r, &req) {
		return
	}
	now := s.o.Now()
	if req.Now != "" {
		t, err := workTime("now", req.Now, now)
		if err != nil {
			writeError(w, http.StatusBadRequest, "invalid_request", err.Error())
			return
		}
		now = t
	}
	rep, err := log.Process(r.Context(), now, events.ProcessOptions{Rollups: true, IgnoreBackoff: true})
	if err != nil {
		s.internal(w, err)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

type buildRequest struct {
	Channel string `json:"channel"`
	From    string `json:"from"` // RFC 3339; empty: from the first message
	To      string `json:"to"`   // RFC 3339; empty: to the last
}

// buildHistory answers POST /api/v1/events/build: build the records that a
// channel's stored history implies (the hook an importer calls when it is
// done).
func (s *Server) buildHistory(w http.ResponseWriter, r *http.Request) {
	log := s.eventsLog(w)
	if log == nil {
		return
	}
	var req buildRequest
	if !decodeBody(w, r, &req) {
		return
	}
	var bounds [2]time.Time
	for i, v := range []string{req.From, req.To} {
		if v == "" {
			continue
		}
		t, err := workTime([]string{"from", "to"}[i], v, s.o.Now())
		if err != nil {
			writeError(w, http.StatusBadRequest, "invalid_request", err.Error())
			return
		}
		bounds[i] = t
	}
	if !bounds[0].IsZero() && !bounds[1].IsZero() && bounds[1].Before(bounds[0]) {
		writeError(w, http.StatusBadRequest, "invalid_request", fmt.Sprintf("to %s is before from %s", req.To, req.From))
		return
	}
	rep, err := log.BuildHistory(r.Context(), req.Channel, bounds[0], bounds[1])
	if errors.Is(err, store.ErrInvalid) {
		writeError(w, http.StatusBadRequest, "invalid_request", strings.TrimPrefix(err.Error(), "invalid: "))
		return
	}
	if err != nil {
		s.internal(w, err)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

func (s *Server) listObjects(w http.ResponseWriter, _ *http.Request) {
	log := s.eventsLog(w)
	if log == nil {
		return
	}
	objs, err := log.Objects()
	if err != nil {
		s.internal(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"objects": objs})
}

// confirmBlock: POST /api/v1/objects/{id}/blocks/{block}/confirm — the
// owner vouches for what a conversation said about someone: the block
// becomes the owner's knowledge and is shown in the owner's private
// prompts too.
func (s *Server) confirmBlock(w http.ResponseWriter, r *http.Request) {
	log := s.eventsLog(w)
	if log == nil {
		return
	}
	b, err := log.ConfirmBlock(r.PathValue("id"), r.PathValue("block"), s.o.Now())
	if errors.Is(err, events.ErrNotFound) {
		writeError(w, http.StatusNotFound, "not_found", err.Error()+"; 'cyan objects ls' shows each object's id and blocks")
		return
	}
	if err != nil {
		s.internal(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"block": b})
}

func (s *Server) listRelations(w http.ResponseWriter, _ *http.Request) {
	log := s.eventsLog(w)
	if log == nil {
		return
	}
	rels, err := log.Relations(s.o.Now())
	if err != nil {
		s.internal(w, err)
		return
	}
	if rels == nil {
		rels = []*events.Relation{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"relations": rels})
}

func (s *Server) listTheories(w http.ResponseWriter, _ *http.Request) {
	log := s.eventsLog(w)
	if log == nil {
		return
	}
	ts, err := log.Theories()
	if err != nil {
		s.internal(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"theories": ts})
}

func (s *Server) internal(w http.ResponseWriter, err error) {
	if storeUnavailable(w, err, "") {
		return
	}
	s.log.Error("request failed", "err", err)
	writeError(w, http.StatusInternalServerError, "internal", "internal error: "+err.Error())
}

// MaxAhead bounds how far past now a time that sets work may reach (a
// rollup's "now", a build's "to"): every day up to it is a period to
// summarise, so a time in the year 9999 would be millions of them.
const MaxAhead = 366 * 24 * time.Hour

// earliest is the oldest time such a request may name.
var earliest = time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)

// workTime parses an RFC 3339 time that sets how much work a request does,
// bounded to [1900, now + MaxAhead].
func workTime(name, v string, now time.Time) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return t, fmt.Errorf("%s %q is not an RFC 3339 time such as 2026-02-16T03:16:00+08:00", name, v)
	}
	if t.Before(earliest) || t.After(now.Add(MaxAhead)) {
		return t, fmt.Errorf("%s %s is out of range: it may be from 1900 to a year from now (%s)", name, v, now.Add(MaxAhead).Format("2006-01-02"))
	}
	return t, nil
}
