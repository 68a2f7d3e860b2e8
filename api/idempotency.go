package api

import (
	"fmt"
	"net/http"

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

// importBatch imports one batch, once per idempotency key when the request
// names one; final marks the import's last batch.
func (s *Server) importBatch(r *http.Request, msgs []*store.Message, final bool) (ans store.ImportAnswer, replayed bool, err error) {
	key, err := idempotencyKey(r, "")
	if err != nil {
		return ans, false, err
	}
	ans, _, replayed, err = s.o.Store.ImportBatch(msgs, store.Batch{Key: key, Final: final})
	return ans, replayed, err
}
