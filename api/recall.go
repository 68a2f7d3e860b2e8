package api

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/importer"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/recall"
	"github.com/cyan-agent/cyan/store"
)

type recallRequest struct {
	Prompt         string  `json:"prompt"`
	MaxResults     int     `json:"max_results"`
	ScoreThreshold float64 `json:"score_threshold"`
	Channel        string  `json:"channel"`
	Since          string  `json:"since"`
	Until          string  `json:"until"`
	Mode           string  `json:"mode"`
	// Window is how many neighbouring messages each side of a hit a result
	// shows (0: the mode's default).
	Window int `json:"window"`
}

// parseWhen reads an RFC 3339 time or a date (2006-01-02, in the daemon's
// time zone).
func parseWhen(key, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.ParseInLocation("2006-01-02", s, time.Local); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%s %q is neither RFC 3339 (2024-05-01T21:30:00+08:00) nor a date (2024-05-01)", key, s)
}

func (s *Server) recall(w http.ResponseWriter, r *http.Request) {
	if s.o.Recall == nil {
		writeError(w, http.StatusServiceUnavailable, "unavailable", "recall is not running in this daemon")
		return
	}
	var req recallRequest
	if !decodeBody(w, r, &req) {
		return
	}
	since, err := parseWhen("since", req.Since)
	if err == nil {
		var until time.Time
		until, err = parseWhen("until", req.Until)
		if err == nil {
			q := recall.Query{Prompt: req.Prompt, MaxResults: req.MaxResults, ScoreThreshold: req.ScoreThreshold,
				Channel: req.Channel, Since: since, Until: until, Window: req.Window}
			began := time.Now()
			res, err := s.o.Recall.Recall(r.Context(), q, req.Mode)
			s.o.Metrics.Recall(req.Mode, "api", time.Since(began))
			if err == nil {
				writeJSON(w, http.StatusOK, res)
				return
			}
			s.writeRecallError(w, err)
			return
		}
	}
	writeError(w, http.StatusBadRequest, "invalid_request", err.Error())
}

func (s *Server) writeRecallError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, recall.ErrBadQuery):
		writeError(w, http.StatusBadRequest, "invalid_request", err.Error())
	case llm.KindOf(err) != "":
		writeError(w, http.StatusBadGateway, "llm_error", "the model did not answer the recall: "+err.Error())
	default:
		s.log.Error("recall", "err", err)
		writeError(w, http.StatusInternalServerError, "internal", "recall failed: "+err.Error())
	}
}

func (s *Server) recallStatus(w http.ResponseWriter, _ *http.Request) {
	if s.o.Recall == nil {
		writeError(w, http.StatusServiceUnavailable, "unavailable", "recall is not running in this daemon")
		return
	}
	writeJSON(w, http.StatusOK, s.o.Recall.Status())
}

// MaxImportBatch bounds the messages of one import request.
const MaxImportBatch = 10000

type importRequest struct {
	Messages []importer.Line `json:"messages"`
	// Channel, when set, puts every message into that channel.
	Channel string `json:"channel"`
	// Final marks the last batch of an import: the journal's
	// MessagesImported says so, and the history's events are built then.
	Final bool `json:"final"`
}

type importResponse struct {
	Added   int `json:"added"`
	Skipped int `json:"skipped"`
}

func (s *Server) importMessages(w http.ResponseWriter, r *http.Request) {
	var req importRequest
	if !decodeBody(w, r, &req) {
		return
	}
	if len(req.Messages) > MaxImportBatch {
		writeError(w, http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("%d messages in one request; send at most %d per batch", len(req.Messages), MaxImportBatch))
		return
	}
	msgs := make([]*store.Message, 0, len(req.Messages))
	var errs []string
	for i, l := range req.Messages {
		m, err := importer.FromLine(l, req.Channel)
		if err != nil {
			errs = append(errs, fmt.Sprintf("message %d: %v", i+1, err))
			if len(errs) == 10 {
				break
			}
			continue
		}
		msgs = append(msgs, m)
	}
	if len(errs) > 0 {
		writeError(w, http.StatusBadRequest, "invalid_request", "nothing of this batch was imported: "+strings.Join(errs, "; "))
		return
	}
	ans, replayed, err := s.importBatch(r, msgs, req.Final)
	if err != nil {
		if errors.Is(err, store.ErrInvalid) {
			writeError(w, http.StatusBadRequest, "invalid_request", err.Error())
			return
		}
		if storeUnavailable(w, err, "the batch was not stored: ") {
			return
		}
		s.log.Error("import", "err", err)
		writeError(w, http.StatusInternalServerError, "internal", "the batch was not stored: "+err.Error())
		return
	}
	if replayed {
		w.Header().Set(ReplayedHeader, "true")
	}
	writeJSON(w, http.StatusOK, importResponse{Added: ans.Added, Skipped: ans.Skipped})
}
