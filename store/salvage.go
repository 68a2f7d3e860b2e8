package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/pb"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"
)

// SalvageReport says what Salvage kept and what it could not.
type SalvageReport struct {
	// Recorded is the message count of the damaged store's last record
	// (0: it had none).
	Recorded uint64
	// Messages were copied into the new data dir; Keys counts every key
	// copied (messages, their indexes, memory, events, …).
	Messages, Keys int
	// Unreadable are the files (or parts of files) left out, each with
	// what was wrong.
	Unreadable []string
	// LostValues counts keys whose value could not be read (a damaged
	// value log); LostMessages how many of those were messages.
	LostValues, LostMessages int
	// Dropped counts index entries left out because their message was
	// lost; Reindexed, index entries written anew for a message kept
	// whose entries were lost.
	Dropped, Reindexed int
}

// Lost is how many messages are known lost: those whose value did not
// read, or the recorded count less those kept, whichever is more. The
// record is of the last clean stop or checkpoint, so after a kill more
// may be lost than it shows: it is a lower bound.
func (r *SalvageReport) Lost() int {
	lost := r.LostMessages
	if r.Recorded > 0 {
		lost = max(lost, int(r.Recorded)-r.Messages)
	}
	return lost
}

// Salvage copies what a damaged data dir's database still holds into a
// new data dir, which must not exist or be empty; the damaged one is only
// read. Every table that reads whole (listed by the MANIFEST or not, in
// the database folder or moved aside), every write-ahead log up to its
// first damaged write and every value log are put together in a scratch
// folder under a MANIFEST made anew, opened with Badger, and every key
// whose value reads is copied; index entries of lost messages are left
// out. The new data dir then opens as a store of its own.
func Salvage(from, to string, log *slog.Logger) (*SalvageReport, error) {
	return salvage(from, to, log, nil)
}

// salvage is Salvage with Badger's options tuned as the damaged store's
// were (tests).
func salvage(from, to string, log *slog.Logger, tune func(badger.Options) badger.Options) (*SalvageReport, error) {
	if tune == nil {
		tune = func(o badger.Options) badger.Options { return o }
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if entries, err := os.ReadDir(to); err == nil && len(entries) > 0 {
		return nil, fmt.Errorf("store: %s is not empty; name a new folder for the salvaged data dir", to)
	}
	if abs(from) == abs(to) {
		return nil, errors.New("store: salvage into a new folder, not the damaged data dir itself")
	}
	rep := &SalvageReport{}
	if last, err := readState(from); err == nil && last != nil {
		rep.Recorded = last.Messages
	}
	scratch := filepath.Join(to, ".salvage")
	if err := os.MkdirAll(scratch, 0o700); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	defer os.RemoveAll(scratch)
	walFull := 2 * tune(badger.DefaultOptions("").WithMemTableSize(memTableSize)).MemTableSize
	if err := gatherFiles(from, scratch, walFull, rep); err != nil {
		return nil, err
	}
	if err := copyKeys(scratch, to, rep, log, tune); err != nil {
		return nil, err
	}
	return rep, nil
}

func abs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}

// gatherFiles copies the readable files of from's database into scratch
// and writes a MANIFEST listing its tables.
func gatherFiles(from, scratch string, walFull int64, rep *SalvageReport) error {
	dbDir := filepath.Join(from, "db")
	var levels map[uint64]badger.TableManifest
	if m, err := replayManifest(filepath.Join(dbDir, badger.ManifestFilename)); err == nil {
		levels = m.Tables
	} else {
		rep.Unreadable = append(rep.Unreadable, fmt.Sprintf("%s: %v (its tables are all read, as level 0)", filepath.Join(dbDir, badger.ManifestFilename), err))
	}
	var changes []*pb.ManifestChange
	for _, dir := range []string{dbDir, filepath.Join(from, AsideDir)} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			name, path := e.Name(), filepath.Join(dir, e.Name())
			switch {
			case strings.HasSuffix(name, ".sst"):
				id, ok := table.ParseFileID(name)
				if !ok || slices.ContainsFunc(changes, func(c *pb.ManifestChange) bool { return c.Id == id }) {
					continue
				}
				tm, listed := levels[id]
				if !listed {
					tm = badger.TableManifest{Level: 0}
				}
				kinds := []options.CompressionType{tm.Compression}
				if !listed {
					kinds = []options.CompressionType{options.Snappy, options.None, options.ZSTD}
				}
				info, _ := e.Info()
				var verr error
				for _, c := range kinds {
					tm.Compression = c
					if _, verr = verifyTable(path, tm, info.Size()); verr == nil {
						break
					}
				}
				if verr != nil {
					// Keep the blocks that still read.
					tm.Compression = kinds[0]
					note, ok := salvageDamagedTable(path, filepath.Join(scratch, name), tm, kinds, verr)
					rep.Unreadable = append(rep.Unreadable, note)
					if ok {
						changes = append(changes, &pb.ManifestChange{Id: id, Op: pb.ManifestChange_CREATE, Level: uint32(tm.Level),
							EncryptionAlgo: pb.EncryptionAlgo_aes, Compression: uint32(options.None)})
					}
					continue
				}
				if err := copyFile(path, filepath.Join(scratch, name), -1); err != nil {
					return err
				}
				changes = append(changes, &pb.ManifestChange{Id: id, Op: pb.ManifestChange_CREATE, Level: uint32(tm.Level),
					EncryptionAlgo: pb.EncryptionAlgo_aes, Compression: uint32(tm.Compression)})
			case strings.HasSuffix(name, ".mem") && dir == dbDir:
				w, err := scanWALFile(path)
				if err != nil || w.tooShort {
					if err == nil {
						err = errors.New("shorter than its header")
					}
					rep.Unreadable = append(rep.Unreadable, fmt.Sprintf("%s: %v", path, err))
					continue
				}
				if d := w.damage(walFull); d != "" {
					rep.Unreadable = append(rep.Unreadable, fmt.Sprintf("%s: the writes after byte %d (%s)", path, w.end, d))
				}
				if err := copyLog(path, filepath.Join(scratch, name), w.end); err != nil {
					return err
				}
			case strings.HasSuffix(name, ".vlog") && dir == dbDir:
				// Copied whole: its values are read where the tables
				// point, past a damaged one too.
				w, err := scanVlogFile(path)
				if err == nil && (w.tooShort || w.zeroIV || w.keyID != 0) && w.end <= walHeaderSize {
					// Badger refuses a log whose header names a key;
					// one holding nothing is left out.
					rep.Unreadable = append(rep.Unreadable, fmt.Sprintf("%s: %s; it holds no value, so it was left out", path, w.damage(w.size)))
					continue
				}
				if err := copyLog(path, filepath.Join(scratch, name), -1); err != nil {
					return err
				}
			}
		}
	}
	return writeManifest(filepath.Join(scratch, badger.ManifestFilename), changes)
}

// copyLog copies a write-ahead or value log as copyFile does, with its
// header's encryption key set to none (cyan does not encrypt; an
// overwritten one would stop Badger from opening the copy).
func copyLog(from, to string, n int64) error {
	if err := copyFile(from, to, n); err != nil {
		return err
	}
	f, err := os.OpenFile(to, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("store: salvage: %w", err)
	}
	if info, err := f.Stat(); err == nil && info.Size() >= 8 {
		_, err = f.WriteAt(make([]byte, 8), 0)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("store: salvage: %w", err)
	}
	return nil
}

// copyFile copies a file, the first n bytes of it when n >= 0.
func copyFile(from, to string, n int64) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return fmt.Errorf("store: salvage: %w", err)
	}
	if n >= 0 && n < int64(len(b)) {
		b = b[:n]
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		return fmt.Errorf("store: salvage: %w", err)
	}
	return nil
}

// writeManifest writes a MANIFEST in Badger's layout (manifest.go,
// helpRewrite, of github.com/dgraph-io/badger/v4 v4.9.6): "Bdgr", the
// external magic (0) and Badger's magic version (8), then one change set
// framed by its length and CRC-32C.
func writeManifest(path string, changes []*pb.ManifestChange) error {
	set, err := proto.Marshal(&pb.ManifestChangeSet{Changes: changes})
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	buf.WriteString("Bdgr")
	_ = binary.Write(&buf, binary.BigEndian, uint16(0))
	_ = binary.Write(&buf, binary.BigEndian, uint16(8))
	_ = binary.Write(&buf, binary.BigEndian, uint32(len(set)))
	_ = binary.Write(&buf, binary.BigEndian, crc32.Checksum(set, crcTable))
	buf.Write(set)
	return os.WriteFile(path, buf.Bytes(), 0o600)
}

// copyKeys opens the scratch database and copies every key whose value
// reads into a new store at to, leaving out the index entries of lost
// messages.
func copyKeys(scratch, to string, rep *SalvageReport, log *slog.Logger, tune func(badger.Options) badger.Options) error {
	opts := tune(badger.DefaultOptions(scratch).
		WithMemTableSize(memTableSize).
		WithValueLogFileSize(valueLogFileSize)).
		WithLogger(badgerLogger{log}).
		WithMetricsEnabled(false).
		WithNumCompactors(0).
		WithNumLevelZeroTables(1 << 20).
		WithNumLevelZeroTablesStall(1<<20 + 1).
		WithChecksumVerificationMode(options.OnBlockRead).
		WithVerifyValueChecksum(true)
	src, err := openBadger(opts, scratch)
	if err != nil {
		return fmt.Errorf("store: salvage: open what could be read: %w", err)
	}
	defer src.Close()

	// First the messages that read whole.
	kept := map[uuid.UUID]bool{}
	msgs := map[uuid.UUID]*Message{}
	err = src.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(prefixMessage)})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			k := it.Item().Key()
			if len(k) < 16 {
				continue
			}
			id, err := uuid.FromBytes(k[len(k)-16:])
			if err != nil {
				continue
			}
			// A message is kept when its value reads and is the message.
			err = it.Item().Value(func(v []byte) error {
				m := new(Message)
				if err := json.Unmarshal(v, m); err != nil {
					return err
				}
				if m.ID != id.String() {
					return fmt.Errorf("the value of message %s holds message %q", id, m.ID)
				}
				msgs[id] = m
				return nil
			})
			if err != nil {
				rep.LostValues++
				rep.LostMessages++
				continue
			}
			kept[id] = true
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: salvage: %w", err)
	}
	rep.Messages = len(kept)

	// The copy is written unsynced and synced once at the end (a
	// salvage cut short is started again into a new folder).
	unsynced := func(o badger.Options) badger.Options { return tune(o).WithSyncWrites(false) }
	dst, err := Open(Options{Dir: to, Logger: log, tune: unsynced})
	if err != nil {
		return fmt.Errorf("store: salvage: create %s: %w", to, err)
	}
	wb := dst.DB().NewWriteBatch()
	indexed := map[string]map[uuid.UUID]bool{prefixMsgID: {}, prefixArrival: {}, prefixToolIndex: {}, prefixExternal: {}}
	var lastSeq uint64
	err = src.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			k := item.KeyCopy(nil)
			v, err := item.ValueCopy(nil)
			if err != nil {
				if !bytes.HasPrefix(k, []byte(prefixMessage)) {
					rep.LostValues++
				}
				continue
			}
			if bytes.HasPrefix(k, []byte(prefixMessage)) && len(k) >= 16 {
				if id, err := uuid.FromBytes(k[len(k)-16:]); err != nil || !kept[id] {
					continue // counted above
				}
			}
			if bytes.HasPrefix(k, []byte(prefixArrival)) {
				// The arrival log is written again as single entries,
				// of its kept messages only (an import's batch too).
				n, err := salvageArrivals(wb, k, v, kept, indexed[prefixArrival], &lastSeq, rep)
				rep.Keys += n
				if err != nil {
					return err
				}
				continue
			}
			if !indexKept(k, v, kept) {
				rep.Dropped++
				continue
			}
			if p, id, ok := indexOf(k, v); ok {
				indexed[p][id] = true
			}
			if err := wb.Set(k, v); err != nil {
				return err
			}
			rep.Keys++
		}
		return nil
	})
	// A kept message whose index entries were in a lost block gets them
	// anew; the arrival log takes it after the last arrival kept.
	if err == nil {
		for _, id := range slices.SortedFunc(maps.Keys(msgs), func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) }) {
			if err = reindex(wb, msgs[id], id, indexed, &lastSeq, rep); err != nil {
				break
			}
		}
	}
	if err == nil {
		err = wb.Flush()
	} else {
		wb.Cancel()
	}
	if err == nil {
		err = dst.DB().Sync()
	}
	if err == nil {
		// The close records the messages now there (state.go).
		var n uint64
		if n, err = dst.countMessages(); err == nil {
			dst.wmu.Lock()
			dst.counted, dst.seqOpen = n, dst.seq
			dst.wmu.Unlock()
		}
	}
	return errors.Join(err, dst.Close())
}

// indexOf names the message an index entry points at (the arrival log's
// entries are salvageArrivals').
func indexOf(k, v []byte) (prefix string, id uuid.UUID, ok bool) {
	for _, p := range []string{prefixMsgID, prefixToolIndex, prefixExternal} {
		if !bytes.HasPrefix(k, []byte(p)) {
			continue
		}
		raw := k[max(0, len(k)-16):]
		if p == prefixExternal {
			raw = v[:min(16, len(v))]
		}
		u, err := uuid.FromBytes(raw)
		return p, u, err == nil
	}
	return "", id, false
}

// salvageArrivals writes one key of the arrival log, a single entry or a
// batch (arrival_batch.go), as single entries, for the messages kept
// (those of lost messages count as dropped), and marks those indexed; it
// returns how many it wrote. A key that does not decode is dropped
// (counted once): its kept messages get entries anew (reindex).
func salvageArrivals(wb *badger.WriteBatch, k, v []byte, kept, indexed map[uuid.UUID]bool, lastSeq *uint64, rep *SalvageReport) (int, error) {
	es, err := arrivals(k, v)
	if err != nil {
		rep.Dropped++
		return 0, nil
	}
	n := 0
	for _, e := range es {
		if !kept[e.id] {
			rep.Dropped++
			continue
		}
		if err := wb.Set(arrivalKey(e.seq), arrivalValue(e.id, e.channel)); err != nil {
			return n, err
		}
		indexed[e.id] = true
		*lastSeq = max(*lastSeq, e.seq)
		n++
	}
	return n, nil
}

// reindex writes the index entries a kept message lacks.
func reindex(wb *badger.WriteBatch, m *Message, id uuid.UUID, indexed map[string]map[uuid.UUID]bool, lastSeq *uint64, rep *SalvageReport) error {
	var sets [][2][]byte
	if !indexed[prefixMsgID][id] {
		sets = append(sets, [2][]byte{idKey(id), []byte(m.Channel)})
	}
	if !indexed[prefixArrival][id] {
		*lastSeq++
		sets = append(sets, [2][]byte{arrivalKey(*lastSeq), arrivalValue(id, m.Channel)})
	}
	if m.Role == RoleTool && !indexed[prefixToolIndex][id] {
		sets = append(sets, [2][]byte{append(toolIndexPrefix(m.Channel), id[:]...), nil})
	}
	if m.ExternalID != "" && !indexed[prefixExternal][id] {
		sets = append(sets, [2][]byte{externalKey(m.Channel, m.ExternalID), id[:]})
	}
	for _, kv := range sets {
		if err := wb.Set(kv[0], kv[1]); err != nil {
			return err
		}
		rep.Reindexed++
		rep.Keys++
	}
	return nil
}

// indexKept reports whether a key is kept: every key but an index entry
// (id, tool result, external id) of a message that was lost.
func indexKept(k, v []byte, kept map[uuid.UUID]bool) bool {
	var id []byte
	switch {
	case bytes.HasPrefix(k, []byte(prefixMsgID)), bytes.HasPrefix(k, []byte(prefixToolIndex)):
		id = k[max(0, len(k)-16):]
	case bytes.HasPrefix(k, []byte(prefixExternal)):
		id = v[:min(16, len(v))]
	default:
		return true
	}
	u, err := uuid.FromBytes(id)
	return err == nil && kept[u]
}
