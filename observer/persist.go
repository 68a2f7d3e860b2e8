package observer

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/cyan-agent/cyan/store"
)

// marks keeps the times and counts observers need across restarts.
type marks struct{ db *badger.DB }

func (m marks) key(parts ...string) []byte {
	return []byte(store.PrefixObserver + strings.Join(parts, "\x00"))
}

func (m marks) getTime(kind, name string) time.Time {
	if m.db == nil {
		return time.Time{}
	}
	var t time.Time
	_ = m.db.View(func(txn *badger.Txn) error {
		it, err := txn.Get(m.key(kind, name))
		if err != nil {
			return err
		}
		return it.Value(func(v []byte) error {
			t, err = time.Parse(time.RFC3339Nano, string(v))
			return err
		})
	})
	return t
}

func (m marks) setTime(kind, name string, t time.Time) error {
	if m.db == nil {
		return nil
	}
	return m.db.Update(func(txn *badger.Txn) error {
		return txn.Set(m.key(kind, name), []byte(t.Format(time.RFC3339Nano)))
	})
}

// spentOn loads the tokens spent per account on a day.
func (m marks) spentOn(day string) map[string]int {
	out := map[string]int{}
	if m.db == nil {
		return out
	}
	prefix := m.key("spent", day, "")
	_ = m.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, PrefetchValues: true})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			name := string(it.Item().Key()[len(prefix):])
			_ = it.Item().Value(func(v []byte) error {
				n, err := strconv.Atoi(string(v))
				out[name] = n
				return err
			})
		}
		return nil
	})
	return out
}

func (m marks) saveSpent(day, account string, n int) {
	if m.db == nil {
		return
	}
	_ = m.db.Update(func(txn *badger.Txn) error {
		return txn.Set(m.key("spent", day, account), []byte(strconv.Itoa(n)))
	})
}

func (m marks) forget(name string) {
	if m.db == nil {
		return
	}
	_ = m.db.Update(func(txn *badger.Txn) error {
		for _, k := range []string{"last", "since"} {
			if err := txn.Delete(m.key(k, name)); err != nil && !errors.Is(err, badger.ErrKeyNotFound) {
				return err
			}
		}
		return nil
	})
}

// StoreBudgets returns the load and save functions NewGovernor takes, kept
// in the store so that a restart does not forget what a day has spent.
func StoreBudgets(st *store.Store) (load func(day string) map[string]int, save func(day, account string, n int)) {
	m := marks{db: st.DB()}
	return m.spentOn, m.saveSpent
}
