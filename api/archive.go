package api

import (
	"fmt"
	"net/http"
	"time"

	"github.com/cyan-agent/cyan/archive"
)

// backup answers POST /api/v1/backup with a consistent backup of the whole
// database, taken while the daemon runs (cyan backup FILE saves it).
func (s *Server) backup(w http.ResponseWriter, r *http.Request) {
	now := s.o.Now()
	w.Header().Set("Content-Type", "application/gzip")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="cyan-%s.backup"`, now.Format("20060102-150405")))
	if _, err := archive.WriteBackup(s.o.Store, w, s.o.Version, now); err != nil {
		// The status is sent; a cut stream (no gzip end) tells the client.
		s.log.Error("backup failed", "err", err)
		panic(http.ErrAbortHandler)
	}
}

// export answers POST /api/v1/export with everything cyan remembers as
// JSON lines (package archive documents the format).
func (s *Server) export(w http.ResponseWriter, r *http.Request) {
	if f := r.URL.Query().Get("format"); f != "" && f != "jsonl" {
		writeError(w, http.StatusBadRequest, "invalid_request", fmt.Sprintf("format %q is not jsonl (the only export format)", f))
		return
	}
	now := s.o.Now()
	w.Header().Set("Content-Type", "application/x-ndjson; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="cyan-%s.jsonl"`, now.Format("20060102-150405")))
	began := time.Now()
	info, err := archive.Export(s.o.Store, w, s.o.Version, now)
	if err != nil {
		s.log.Error("export failed", "err", err)
		panic(http.ErrAbortHandler)
	}
	s.log.Info("exported", "channels", info.Channels, "messages", info.Messages, "records", info.Records, "took", time.Since(began).Round(time.Millisecond))
}

// postOnly answers a GET of a route that does work on the server (a
// backup, an export): a GET never has side effects, so a link or an
// address fetched by anyone (a chat image's URL, a page's <img>) cannot
// start one. It says which method to use.
func postOnly(what string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", fmt.Sprintf("%s runs on the server, so it is a POST: use POST %s (cyan backup and cyan export do); a GET never has side effects", what, r.URL.Path))
	}
}
