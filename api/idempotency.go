package api

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/cyan-agent/cyan/store"
)

// IdempotencyHeader names a write, so that a client retrying it (it never
// saw the answer) gets the first answer instead of a second write.
const IdempotencyHeader = "Idempotency-Key"

// ReplayedHeader is set to "true" on an answer that repeats the first
// answer to an idempotency key.
const ReplayedHeader = "Idempotent-Replayed"

// idempotencyKey is the request's key: the header, or the body's own id
// of the write (a client message_id); both must agree when both are sent.
func idempotencyKey(r *http.Request, bodyKey string) (string, error) {
	h := r.Header.Get(IdempotencyHeader)
	if h != "" && bodyKey != "" && h != bodyKey {
		return "", fmt.Errorf("%w: the %s header (%q) and message_id (%q) differ; send one, or the same in both", store.ErrInvalid, IdempotencyHeader, h, bodyKey)
	}
	key := h
	if key == "" {
		key = bodyKey
	}
	if key == "" {
		return "", nil
	}
	if err := store.ValidKey(key); err != nil {
		return "", err
	}
	return key, nil
}

// storeUnavailable answers a write the store refused because of its disk
// (507 Insufficient Storage: full) or its data dir (503: removed), with the
// store's message naming the disk and folder, and reports whether it did.
func storeUnavailable(w http.ResponseWriter, err error, kept string) bool {
	switch {
	case errors.Is(err, store.ErrDiskFull):
		writeError(w, http.StatusInsufficientStorage, "disk_full", kept+errMessage(err))
	case errors.Is(err, store.ErrDataDirGone):
		writeError(w, http.StatusServiceUnavailable, "data_dir_gone", kept+errMessage(err))
	default:
		return false
	}
	return true
}

// errMessage is the innermost readable part of a store error: the
// *SpaceError or *GoneError's own words, without the wrapping prefixes.
func errMessage(err error) string {
	var se *store.SpaceError
	var ge *store.GoneError
	switch {
	case errors.As(err, &se):
		return se.Error()
	case errors.As(err, &ge):
		return ge.Error()
	}
	return err.Error()
}

// importBatch imports one batch, once per idempotency key when the request
// names one.
func (s *Server) importBatch(r *http.Request, msgs []*store.Message) (added []*store.Message, ans store.ImportAnswer, replayed bool, err error) {
	key, err := idempotencyKey(r, "")
	if err != nil {
		return nil, ans, false, err
	}
	if key == "" {
		added, err = s.o.Store.Import(msgs)
		return added, store.ImportAnswer{Added: len(added), Skipped: len(msgs) - len(added)}, false, err
	}
	ans, added, replayed, err = s.o.Store.ImportOnce(key, msgs)
	return added, ans, replayed, err
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
