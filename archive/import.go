package archive

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/dgraph-io/badger/v4"

	"github.com/cyan-agent/cyan/store"
)

// ImportInfo counts what an import added, and what it kept because the
// store already held it.
type ImportInfo struct {
	Channels, Messages, Compressed, Records int
	Kept                                    int
}

// batchSize is how many lines of one kind are written together.
const batchSize = 1000

// IsExport reports whether the first line of a file is an export's header.
func IsExport(first []byte) bool {
	var h Header
	return json.Unmarshal(first, &h) == nil && h.Format == ExportFormat
}

// Import reads an export (doc.go) into st. What st already holds wins.
func Import(st *store.Store, r io.Reader) (ImportInfo, error) {
	var info ImportInfo
	br := bufio.NewReaderSize(r, 1<<20)
	dec := json.NewDecoder(br)
	var h Header
	if err := dec.Decode(&h); err != nil || h.Format != ExportFormat {
		return info, errors.New("archive: this is not a cyan export (its first line is not a cyan-export header); cyan export makes them")
	}
	if h.Version > ExportVersion {
		return info, fmt.Errorf("archive: this export is version %d, written by cyan %s; this cyan reads version %d: import it with a newer cyan", h.Version, h.Cyan, ExportVersion)
	}
	var msgs []json.RawMessage
	var recs []Line
	flush := func() error {
		if len(msgs) > 0 {
			n, err := st.RestoreMessages(msgs)
			if err != nil {
				return err
			}
			info.Messages += n
			info.Kept += len(msgs) - n
			msgs = msgs[:0]
		}
		if len(recs) > 0 {
			n, err := restoreRecords(st, recs)
			if err != nil {
				return err
			}
			info.Records += n
			info.Kept += len(recs) - n
			recs = recs[:0]
		}
		return nil
	}
	for n := 2; ; n++ {
		var l Line
		err := dec.Decode(&l)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return info, fmt.Errorf("archive: line %d: %w", n, err)
		}
		switch l.Type {
		case "channel":
			if l.Channel == nil {
				return info, fmt.Errorf("archive: line %d: a channel line without its channel", n)
			}
			if err := st.RestoreChannel(*l.Channel); err != nil {
				return info, fmt.Errorf("archive: line %d: %w", n, err)
			}
			info.Channels++
		case "message":
			if len(l.Message) == 0 {
				return info, fmt.Errorf("archive: line %d: a message line without its message", n)
			}
			msgs = append(msgs, l.Message)
			if len(msgs) == batchSize {
				if err := flush(); err != nil {
					return info, fmt.Errorf("archive: near line %d: %w", n, err)
				}
			}
		case "compressed":
			if l.Compressed == nil {
				return info, fmt.Errorf("archive: line %d: a compressed line without its text", n)
			}
			if err := flush(); err != nil {
				return info, fmt.Errorf("archive: near line %d: %w", n, err)
			}
			added, err := st.RestoreCompressed(l.ID, *l.Compressed)
			if err != nil {
				return info, fmt.Errorf("archive: line %d: %w", n, err)
			}
			if added {
				info.Compressed++
			} else {
				info.Kept++
			}
		case "record":
			if _, ok := spaceByName(l.Space); !ok {
				return info, fmt.Errorf("archive: line %d: %q is not a kind of record this cyan knows", n, l.Space)
			}
			recs = append(recs, l)
			if len(recs) == batchSize {
				if err := flush(); err != nil {
					return info, fmt.Errorf("archive: near line %d: %w", n, err)
				}
			}
		default:
			return info, fmt.Errorf("archive: line %d: %q is not a kind of line this cyan knows", n, l.Type)
		}
	}
	if err := flush(); err != nil {
		return info, fmt.Errorf("archive: at the end: %w", err)
	}
	return info, nil
}

// restoreRecords writes records whose keys the store does not hold yet.
func restoreRecords(st *store.Store, recs []Line) (int, error) {
	if err := st.Writable(); err != nil {
		return 0, err
	}
	type kv struct{ k, v []byte }
	var kvs []kv
	for _, l := range recs {
		sp, _ := spaceByName(l.Space)
		var key, val []byte
		switch {
		case l.Key != nil:
			key = []byte(*l.Key)
		case l.KeyB64 != nil:
			b, err := base64.StdEncoding.DecodeString(*l.KeyB64)
			if err != nil {
				return 0, fmt.Errorf("a %s record's key_b64: %w", l.Space, err)
			}
			key = b
		default:
			return 0, fmt.Errorf("a %s record without a key", l.Space)
		}
		switch {
		case l.Value != nil:
			val = l.Value
		case l.ValueB64 != nil:
			b, err := base64.StdEncoding.DecodeString(*l.ValueB64)
			if err != nil {
				return 0, fmt.Errorf("a %s record's value_b64: %w", l.Space, err)
			}
			val = b
		default:
			return 0, fmt.Errorf("a %s record without a value", l.Space)
		}
		kvs = append(kvs, kv{append([]byte(sp.prefix), key...), val})
	}
	db := st.DB()
	wb := db.NewWriteBatch()
	defer wb.Cancel()
	added := 0
	err := db.View(func(txn *badger.Txn) error {
		for _, x := range kvs {
			if _, err := txn.Get(x.k); err == nil {
				continue
			} else if !errors.Is(err, badger.ErrKeyNotFound) {
				return err
			}
			if err := wb.Set(x.k, x.v); err != nil {
				return err
			}
			added++
		}
		return nil
	})
	if err == nil {
		err = wb.Flush()
	}
	return added, err
}
