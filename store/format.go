package store

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/dgraph-io/badger/v4"
)

// The store's format is the newest way of writing its keys that it may
// hold, recorded under formatKey the first time it is used; a store that
// never used one records nothing (format 1). An Open that finds a format
// newer than it knows refuses the store, so an older cyan never misreads
// what a newer one wrote (a cyan older than the record itself cannot
// know to look).
//
//	1  every message has its own arrival entry
//	2  an import writes its arrivals a transaction at a time (arrival_batch.go)
const (
	formatKey     = prefixFormat // fmt\x00 → the format, in decimal
	formatBatches = 2
	storeFormat   = formatBatches // the newest this store reads
)

// ErrNewerFormat: the data dir was written by a newer cyan.
var ErrNewerFormat = errors.New("the data was written by a newer version of cyan")

// readFormat reads the recorded format (1 when none is).
func readFormat(db *badger.DB) (int, error) {
	f := 1
	err := db.View(func(txn *badger.Txn) error {
		item, err := txn.Get([]byte(formatKey))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return item.Value(func(v []byte) error {
			n, err := strconv.Atoi(string(v))
			if err != nil || n < 1 {
				return fmt.Errorf("the format record %q is not a format", v)
			}
			f = n
			return nil
		})
	})
	if err == nil && f > storeFormat {
		err = fmt.Errorf("%w (format %d; this one reads up to %d): run the newer cyan, or restore a backup made by this one", ErrNewerFormat, f, storeFormat)
	}
	return f, err
}

// useFormat records in txn that the store now holds format f, unless it
// already records f or newer. The caller commits txn and then sets
// s.format (under wmu).
func (s *Store) useFormat(txn *badger.Txn, f int) error {
	if s.format >= f {
		return nil
	}
	return txn.Set([]byte(formatKey), []byte(strconv.Itoa(f)))
}
