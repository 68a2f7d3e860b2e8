package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/table"
)

// StateFile is the store's record, beside the database folder, of what the
// database held when the store last knew it whole: written atomically at
// a clean close and at each checkpoint (an open that passed its checks,
// and every change of Badger's MANIFEST seen after a write). The next
// Open checks the folder against it before Badger sees the folder
// (check.go).
const StateFile = "db.state"

// state is the content of StateFile.
type state struct {
	// Clean: written by a clean close (no write-ahead log holds data).
	Clean bool `json:"clean"`
	// Messages is the number of messages stored then.
	Messages uint64 `json:"messages"`
	// Manifest is the MANIFEST's length and the CRC-32C of those bytes.
	// Badger only appends to it (or rewrites it whole, rarely), so a
	// MANIFEST that is whole starts with these bytes.
	Manifest manifestMark `json:"manifest"`
	// Tables are the ids of the tables the MANIFEST listed.
	Tables []uint64 `json:"tables"`
	// WALs is the newest write-ahead log (*.mem) then present, when it
	// held a finished write (snapshot says why only the newest).
	WALs []uint64 `json:"wals,omitempty"`
	// WALVersions are the commit versions of the first finished write of
	// each log in WALs: once a table holds that version or a newer one,
	// the log was flushed, and a kill while Badger deleted it (it
	// truncates the file to zero bytes, then removes it) lost nothing.
	WALVersions map[uint64]uint64 `json:"wal_versions,omitempty"`
	// VLogs are the value logs that held values, by id, with their
	// length (a value log being written is left out: its length is
	// Badger's preallocation). cyan never collects the value log, so
	// none of them goes away.
	VLogs map[uint64]int64 `json:"vlogs,omitempty"`
	// VLogIDs are the ids of the value logs then present that held
	// values: Badger removes only empty ones, as it opens (value.go).
	VLogIDs []uint64 `json:"vlog_ids,omitempty"`
	// Written is when the record was made.
	Written time.Time `json:"written"`
	// Short, once an open found fewer messages than recorded, stays
	// until the owner accepts the loss or repairs the database.
	Short *Shortfall `json:"short,omitempty"`

	// nextWAL and nextVlog are the ids the next logs Badger makes will
	// have; emptyWAL and emptyVlog, plus one, the newest logs that held
	// nothing yet (0: none). Not recorded: noteWrite watches them.
	nextWAL, nextVlog, emptyWAL, emptyVlog uint64
}

type manifestMark struct {
	Size int64  `json:"size"`
	CRC  uint32 `json:"crc"`
}

// Shortfall is an open that found fewer messages than the store had
// recorded: some were lost while cyan was stopped.
type Shortfall struct {
	Recorded uint64    `json:"recorded"`
	Found    uint64    `json:"found"`
	At       time.Time `json:"at"`
}

func (s *Shortfall) String() string {
	return fmt.Sprintf("the database opened at %s with %d messages, but %d were recorded before: %d are missing. Run cyan repair NEW_DIR to salvage what the files still hold, or cyan restore BACKUP into an empty data dir",
		s.At.Local().Format("2006-01-02 15:04:05"), s.Found, s.Recorded, s.Recorded-s.Found)
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// readState reads the record of a data dir; nil without error when there
// is none yet.
func readState(dir string) (*state, error) {
	b, err := os.ReadFile(filepath.Join(dir, StateFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var st state
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("%s is not the store's record (%v)", filepath.Join(dir, StateFile), err)
	}
	return &st, nil
}

// writeState replaces the record atomically: a temporary file, synced,
// renamed over the old one, the folder synced.
func writeState(dir string, st *state) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(dir, StateFile)
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// snapshot reads what the database folder holds now: the MANIFEST's mark
// and tables, and the write-ahead logs. Messages, Clean and Short are the
// caller's.
func snapshot(dbDir string, vlogFull int64) (*state, error) {
	b, err := os.ReadFile(filepath.Join(dbDir, badger.ManifestFilename))
	if err != nil {
		return nil, err
	}
	st := &state{Manifest: manifestMark{Size: int64(len(b)), CRC: crc32.Checksum(b, crcTable)}}
	m, err := replayManifest(filepath.Join(dbDir, badger.ManifestFilename))
	if err != nil {
		return nil, err
	}
	if info, err := os.Stat(filepath.Join(dbDir, badger.ManifestFilename)); err != nil || info.Size() != st.Manifest.Size {
		return nil, errors.New("the MANIFEST changed while it was read")
	}
	for id := range m.Tables {
		st.Tables = append(st.Tables, id)
	}
	slices.Sort(st.Tables)
	_, wals, vlogs, err := listDB(dbDir)
	if err != nil {
		return nil, err
	}
	for id := range vlogs {
		st.nextVlog = max(st.nextVlog, id+1)
		if holdsWrites(filepath.Join(dbDir, fmt.Sprintf("%06d.vlog", id))) {
			st.VLogIDs = append(st.VLogIDs, id)
		} else {
			st.emptyVlog = max(st.emptyVlog, id+1)
		}
	}
	slices.Sort(st.VLogIDs)
	for id, size := range vlogs {
		if size > walHeaderSize && size != vlogFull {
			if st.VLogs == nil {
				st.VLogs = map[uint64]int64{}
			}
			st.VLogs[id] = size
		}
	}
	versions := map[uint64]uint64{}
	for id := range wals {
		st.nextWAL = max(st.nextWAL, id+1)
		if v, ok := firstFinishedWrite(filepath.Join(dbDir, fmt.Sprintf("%05d.mem", id))); ok {
			versions[id] = v
		} else {
			st.emptyWAL = max(st.emptyWAL, id+1)
		}
	}
	// Only the newest log, the memtable being written, is recorded. An
	// older one is a full memtable on its way to a table: Badger appends
	// the table to the MANIFEST and then removes the log, and a snapshot
	// taken between the two would record a log that is gone at the next
	// start with the MANIFEST unchanged, which the check must not call
	// damage. The newest log is never flushed without a new one first, and
	// its flush then changes the MANIFEST.
	if newest := st.nextWAL - 1; st.nextWAL > 0 && newest >= st.emptyWAL {
		st.WALs = []uint64{newest}
		st.WALVersions = map[uint64]uint64{newest: versions[newest]}
	}
	return st, nil
}

// holdsFinishedWrite reports whether a write-ahead log holds a write
// Badger replays: a finished transaction, or an entry outside one. A log
// holding only the start of a transaction (the checkpoint read it while
// the journal or the router, which write beside the store's lock, was
// writing its first one) is empty to Badger once a kill cuts it there:
// Badger removes it as it opens, losing nothing, and recorded as holding
// writes it would make the start after that refuse the data dir as
// damaged (this write-ahead log is missing).
func holdsFinishedWrite(path string) bool {
	_, ok := firstFinishedWrite(path)
	return ok
}

// firstFinishedWrite is holdsFinishedWrite with the commit version of
// that first write.
func firstFinishedWrite(path string) (version uint64, ok bool) {
	if !holdsWrites(path) {
		return 0, false
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return 0, false
	}
	// The log is read from its start in growing steps, not whole: a log
	// is preallocated at twice the memtable, and the checkpoint after
	// each of an import's batches reads it, where its first transaction
	// is all it needs.
	var b []byte
	off := walHeaderSize
	for want := int64(256 << 10); ; want *= 4 {
		want = min(want, info.Size())
		more := make([]byte, want)
		copy(more, b)
		if n, err := f.ReadAt(more[len(b):], int64(len(b))); int64(len(b)+n) < want {
			return 0, false // the file shrank, or cannot be read
		} else if err != nil && err != io.EOF {
			return 0, false
		}
		b = more
		for {
			e, n := walEntry(b, off)
			if n == 0 {
				break // the end of what is read, or of the writes
			}
			if e.meta&walBitFinTxn != 0 || e.meta&walBitTxn == 0 {
				return e.version(b), true
			}
			off += n
		}
		if want == info.Size() {
			return 0, false
		}
	}
}

// holdsWrites reports whether a write-ahead or value log has an entry
// after its header. Only such logs are recorded: Badger removes an empty
// one as it opens, and a start killed then must not look damaged.
func holdsWrites(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, walHeaderSize+8)
	n, _ := io.ReadFull(f, b)
	return n > walHeaderSize && !allZero(b[walHeaderSize:n])
}

// listDB lists a database folder's tables, write-ahead logs and value
// logs, each by id with its size.
func listDB(dbDir string) (tables, wals, vlogs map[uint64]int64, err error) {
	entries, err := os.ReadDir(dbDir)
	if err != nil {
		return nil, nil, nil, err
	}
	tables, wals, vlogs = map[uint64]int64{}, map[uint64]int64{}, map[uint64]int64{}
	for _, e := range entries {
		name := e.Name()
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		if id, ok := table.ParseFileID(name); ok && strings.HasSuffix(name, ".sst") {
			tables[id] = info.Size()
			continue
		}
		for ext, m := range map[string]map[uint64]int64{".mem": wals, ".vlog": vlogs} {
			if base, ok := strings.CutSuffix(name, ext); ok {
				if id, err := strconv.ParseUint(base, 10, 64); err == nil {
					m[id] = info.Size()
				}
			}
		}
	}
	return tables, wals, vlogs, nil
}

// replayManifest reads a MANIFEST with Badger's own reader. A panic in it
// (a damaged file can make it allocate or index wildly) is an error.
func replayManifest(path string) (m badger.Manifest, err error) {
	f, err := os.Open(path)
	if err != nil {
		return m, err
	}
	defer f.Close()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("reading it panicked: %v", r)
		}
	}()
	m, end, err := badger.ReplayManifestFile(f, 0, badger.DefaultOptions("").WithLogger(nil))
	if err != nil {
		return m, err
	}
	st, err := f.Stat()
	if err != nil {
		return m, err
	}
	if end != st.Size() {
		return m, fmt.Errorf("it ends in a cut-off entry at byte %d of %d", end, st.Size())
	}
	return m, nil
}

// vlog is the recorded length of a value log.
func (st *state) vlog(id uint64) (int64, bool) {
	if st == nil {
		return 0, false
	}
	n, ok := st.VLogs[id]
	return n, ok
}

// Record is what the store last recorded of its database (StateFile), as
// cyan doctor shows it.
type Record struct {
	Clean    bool       // written by a clean close
	Messages uint64     // messages stored then
	Written  time.Time  // when
	Short    *Shortfall // an open found fewer messages than recorded
}

// LastRecord reads a data dir's record; nil without error when the store
// has made none yet.
func LastRecord(dir string) (*Record, error) {
	st, err := readState(dir)
	if st == nil || err != nil {
		return nil, err
	}
	return &Record{Clean: st.Clean, Messages: st.Messages, Written: st.Written, Short: st.Short}, nil
}

// flushed reports whether the write-ahead log id, recorded as holding
// writes, was flushed to a table since: a table holds its first write's
// version or a newer one (Badger gives commits rising versions and
// flushes its memtables in order), newest being the newest version of the
// tables. A record made before the versions were kept asks less: that a
// table was added since the record (the MANIFEST grew and lists a table
// the record does not).
func (st *state) flushed(id, newest uint64, manifestSize int, tables map[uint64]badger.TableManifest) bool {
	if v, ok := st.WALVersions[id]; ok {
		return v > 0 && newest >= v
	}
	if int64(manifestSize) <= st.Manifest.Size {
		return false
	}
	for t := range tables {
		if !slices.Contains(st.Tables, t) {
			return true
		}
	}
	return false
}
