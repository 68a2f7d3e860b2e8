package store

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// openBadger opens the database; a panic inside Badger (a file it cannot
// parse) is an error naming the folder, never the daemon's end. (Tables
// are opened in Badger's own goroutines, where no recover reaches:
// checkDB has read every one of them first.)
func openBadger(opts badger.Options, dir string) (db *badger.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			db = nil
			err = &DamageError{Dir: dir, File: opts.Dir, Problem: fmt.Sprintf("Badger could not read a file in it (it panicked: %v)", r)}
		}
	}()
	return badger.Open(opts)
}

// countMessages counts the stored messages (the id index, keys only).
func (s *Store) countMessages() (uint64, error) {
	var n uint64
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(prefixMsgID)})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			n++
		}
		return nil
	})
	return n, err
}

// startCount counts the messages after open and compares them with the
// record of the last clean close or checkpoint: fewer is logged as an
// error and kept (Shortfall), then a checkpoint records the open.
func (s *Store) startCount(last *state, vlogFull int64, now time.Time) error {
	n, err := s.countMessages()
	if err != nil {
		return fmt.Errorf("store: count the messages: %w", err)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.counted, s.seqOpen, s.prior = n, s.seq, last
	s.vlogFull = vlogFull
	if last != nil && n < last.Messages {
		s.short = &Shortfall{Recorded: last.Messages, Found: n, At: now}
		s.log.Error("the database opened with fewer messages than it held: "+s.short.String(),
			"recorded", last.Messages, "found", n, "dir", s.dir)
	}
	if err := s.checkpoint(false); err != nil {
		s.log.Warn("could not record the database's state; the next start checks less", "err", err)
	}
	return nil
}

// messages is the number of messages stored now. Called with wmu held.
func (s *Store) messages() uint64 { return s.counted + (s.seq - s.seqOpen) }

// checkpoint records what the database holds now (state.go). Called with
// wmu held, so no message write runs.
func (s *Store) checkpoint(clean bool) error {
	dbDir := filepath.Join(s.dir, "db")
	st, err := snapshot(dbDir, s.vlogFull)
	if err != nil {
		return err
	}
	st.Clean, st.Messages, st.Written = clean, s.messages(), time.Now()
	switch {
	case s.short != nil:
		st.Short = s.short
	case s.prior != nil:
		st.Short = s.prior.Short
	}
	if err := writeState(s.dir, st); err != nil {
		return err
	}
	s.manifest = st.Manifest.Size
	s.nextWAL, s.nextVlog = st.nextWAL, st.nextVlog
	s.emptyWAL, s.emptyVlog = st.emptyWAL, st.emptyVlog
	return nil
}

// noteWrite checkpoints when Badger's MANIFEST changed since the last one
// (a flush or a compaction), a new write-ahead log or value log was made,
// or one that was empty took its first write: the record then lists the
// files as they are. A write is acknowledged only after this, so every
// file holding an acknowledged write is in the record. Called with wmu
// held, after a write; when nothing changed it costs three stat calls and
// reads of the empty logs' first bytes.
func (s *Store) noteWrite() {
	if s.dir == "" {
		return
	}
	db := filepath.Join(s.dir, "db")
	info, err := os.Stat(filepath.Join(db, badger.ManifestFilename))
	if err != nil {
		return
	}
	changed := info.Size() != s.manifest
	if !changed && s.nextWAL > 0 {
		_, err := os.Stat(filepath.Join(db, fmt.Sprintf("%05d.mem", s.nextWAL)))
		changed = err == nil
	}
	if !changed && s.nextVlog > 0 {
		_, err := os.Stat(filepath.Join(db, fmt.Sprintf("%06d.vlog", s.nextVlog)))
		changed = err == nil
	}
	// A log that was empty at the checkpoint and now holds writes.
	if !changed && s.emptyWAL > 0 {
		changed = holdsWrites(filepath.Join(db, fmt.Sprintf("%05d.mem", s.emptyWAL-1)))
	}
	if !changed && s.emptyVlog > 0 {
		changed = holdsWrites(filepath.Join(db, fmt.Sprintf("%06d.vlog", s.emptyVlog-1)))
	}
	if !changed {
		return
	}
	if err := s.checkpoint(false); err != nil {
		s.log.Debug("checkpoint skipped", "err", err)
	}
}

// Shortfall is non-nil when this open found fewer messages than the store
// had recorded (/healthz shows it as degraded).
func (s *Store) Shortfall() *Shortfall {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.short
}
