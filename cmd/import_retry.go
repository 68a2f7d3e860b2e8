package cmd

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// defaultImportRetry is how long cyan import waits for a daemon that
// stopped answering (restarted by its service manager, say) before it
// gives up (--retry-for).
const defaultImportRetry = 30 * time.Second

// sendError is a batch the daemon did not take; a plain error from the
// importer is a problem in the file.
type sendError struct{ err error }

func (e *sendError) Error() string { return e.err.Error() }
func (e *sendError) Unwrap() error { return e.err }

// sendOnce posts one batch with an idempotency key made from this run and
// the batch's content (running the command again is a new import, whose
// answer says what was already there), and posts it again with the same
// key while the daemon does not answer, up to r.retryFor: a batch the
// daemon stored before it died is answered from the first answer, never
// stored twice.
func (r *importRun) sendOnce(body map[string]any, out any) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	if r.run == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		r.run = hex.EncodeToString(b[:])
	}
	sum := sha256.Sum256(raw)
	key := "import-" + r.run + "-" + hex.EncodeToString(sum[:12])
	began, wait := time.Now(), 250*time.Millisecond
	for {
		err := r.c.do("POST", "/api/v1/import", json.RawMessage(raw), out, "Idempotency-Key", key)
		var ae *apiError
		if err == nil || errors.As(err, &ae) || time.Since(began) > r.retryFor {
			if err != nil {
				return &sendError{err}
			}
			return nil
		}
		fmt.Fprintf(r.out, "\rthe daemon is not answering (%v); trying again…", err)
		time.Sleep(wait)
		wait = min(2*wait, 4*time.Second)
	}
}

// importError says what an import that stopped should do next: a file to
// fix, a daemon to start again, or a disk to free — and that nothing is
// imported twice when the same command runs again.
func importError(err error, done int) error {
	before := ""
	if done > 0 {
		before = fmt.Sprintf("\n%d messages before it were imported", done)
	}
	var se *sendError
	if !errors.As(err, &se) {
		return fmt.Errorf("%w%s; fix the file and run the same command again (nothing is imported twice)", err, before)
	}
	var ae *apiError
	switch {
	case !errors.As(err, &ae):
		return fmt.Errorf("the daemon stopped answering during the import: %w%s. Start it again (cyan serve) and run the same command: nothing is imported twice", err, before)
	case ae.Status == http.StatusInsufficientStorage || ae.Status == http.StatusServiceUnavailable:
		return fmt.Errorf("the daemon could not store the batch: %w%s. Once that is fixed, run the same command again: nothing is imported twice", err, before)
	case ae.Status == http.StatusBadRequest || ae.Status == http.StatusRequestEntityTooLarge:
		return fmt.Errorf("%w%s; fix the file and run the same command again (nothing is imported twice)", err, before)
	}
	return fmt.Errorf("%w%s; run the same command again (nothing is imported twice)", err, before)
}
