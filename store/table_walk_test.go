package store

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/badger/v4/y"
	"github.com/google/uuid"
)

// builtTable builds a table with Badger's own builder: n entries, every
// 50th with a value of 100 KB (a block of its own), and returns its bytes
// with the keys and values put in.
func builtTable(t testing.TB, n int, comp options.CompressionType) ([]byte, [][]byte, [][]byte) {
	t.Helper()
	b := table.NewTableBuilder(table.Options{BlockSize: 4 << 10, BloomFalsePositive: 0.01, Compression: comp, TableSize: 64 << 20})
	defer b.Close()
	r := rand.New(rand.NewPCG(1, uint64(n)))
	var keys, vals [][]byte
	for i := range n {
		k := y.KeyWithTs(fmt.Appendf(nil, "msg\x00%08d", i), uint64(1000+i))
		v := make([]byte, 20+r.IntN(200))
		if i%50 == 49 {
			v = make([]byte, 100<<10)
		}
		for j := range v {
			v[j] = byte('a' + r.IntN(3)) // compressible, as text is
		}
		b.Add(k, y.ValueStruct{Value: v, Meta: byte(i % 2), ExpiresAt: uint64(i % 3)}, 0)
		keys, vals = append(keys, k), append(vals, v)
	}
	path := filepath.Join(t.TempDir(), "000001.sst")
	tb, err := table.CreateTable(path, b)
	if err != nil {
		t.Fatal(err)
	}
	_ = tb.MmapFile.Close(-1)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data, keys, vals
}

// TestWalkTableReadsBadgersBlocks: a whole table walks to its index with
// every entry as put in, and a table cut anywhere gives the entries of
// the blocks before the cut, in order, and nothing else.
func TestWalkTableReadsBadgersBlocks(t *testing.T) {
	for _, comp := range []options.CompressionType{options.None, options.Snappy} {
		t.Run(fmt.Sprint(comp), func(t *testing.T) {
			data, keys, vals := builtTable(t, 2000, comp)
			w := walkTable(data, comp)
			if len(w.keys) != len(keys) {
				t.Fatalf("walked %d of %d entries (%d blocks, stopped at %d of %d bytes: %v)", len(w.keys), len(keys), w.blocks, w.end, len(data), w.err)
			}
			for i := range keys {
				if !bytes.Equal(w.keys[i], keys[i]) || !bytes.Equal(w.vals[i].Value, vals[i]) || w.vals[i].Meta != byte(i%2) || w.vals[i].ExpiresAt != uint64(i%3) {
					t.Fatalf("entry %d: %q %+v, want %q", i, w.keys[i], w.vals[i].Meta, keys[i])
				}
			}
			// The index is what follows the blocks: nothing more reads.
			if w.err == nil || w.end >= len(data) {
				t.Fatalf("the walk went past the blocks: %d of %d, %v", w.end, len(data), w.err)
			}
			prev := len(keys)
			for _, cut := range []int{w.end - 1, w.end * 3 / 4, w.end / 2, w.end / 7, 100} {
				c := walkTable(data[:cut], comp)
				if c.end > cut || len(c.keys) > prev || len(c.keys) == 0 && cut > 10<<10 {
					t.Errorf("cut at %d: %d entries up to %d", cut, len(c.keys), c.end)
				}
				for i := range c.keys {
					if !bytes.Equal(c.keys[i], keys[i]) {
						t.Fatalf("cut at %d: entry %d is %q, want %q", cut, i, c.keys[i], keys[i])
					}
				}
				prev = len(c.keys)
			}
		})
	}
}

// FuzzWalkTable: whatever the bytes, the walk neither panics nor returns
// an entry that is not in order with a key holding a version.
func FuzzWalkTable(f *testing.F) {
	for _, comp := range []options.CompressionType{options.None, options.Snappy} {
		data, _, _ := builtTable(f, 40, comp) // small: no 100 KB value
		f.Add(data, uint8(comp))
		f.Add(data[:len(data)/2], uint8(comp))
	}
	f.Add([]byte{}, uint8(options.None))
	f.Add(make([]byte, 64), uint8(options.Snappy))
	f.Fuzz(func(t *testing.T, b []byte, comp uint8) {
		w := walkTable(b, options.CompressionType(comp%3))
		if w.end > len(b) || len(w.keys) != len(w.vals) {
			t.Fatalf("walk: end %d of %d, %d keys, %d values", w.end, len(b), len(w.keys), len(w.vals))
		}
		for i, k := range w.keys {
			if len(k) <= 8 || i > 0 && y.CompareKeys(w.keys[i-1], k) >= 0 {
				t.Fatalf("entry %d: key %q out of order or without a version", i, k)
			}
		}
		_, _ = snappyLen(b)
	})
}

// bigMemtable holds 14,000 messages in one memtable.
func bigMemtable(o badger.Options) badger.Options { return o.WithMemTableSize(32 << 20) }

// tableStore writes n messages into a data dir and stops it, so that they
// are all in one table (the memtable, flushed at close). It returns the
// ids and the table's path.
func tableStore(t *testing.T, dir string, n int) ([]string, string) {
	t.Helper()
	s, err := Open(Options{Dir: dir, tune: bigMemtable})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := 0; i < n; i += 100 {
		var batch []*Message
		for j := i; j < min(n, i+100); j++ {
			batch = append(batch, &Message{Channel: fmt.Sprintf("c%d", j%5), Role: RoleUser, Text: fmt.Sprintf("message %05d: %s", j, strings.Repeat("hello there ", j%7+1))})
		}
		if err := s.Append(t0.Add(time.Duration(i)*time.Second), batch...); err != nil {
			t.Fatal(err)
		}
		for _, m := range batch {
			ids = append(ids, m.ID)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	tables, _, _, err := listDB(filepath.Join(dir, "db"))
	if err != nil || len(tables) != 1 {
		t.Fatalf("the store has tables %v (%v), want one", tables, err)
	}
	for id := range tables {
		return ids, filepath.Join(dir, "db", table.IDToFilename(id))
	}
	return nil, ""
}

// messagesIn counts the messages in a table's bytes that walk.
func messagesIn(b []byte) map[string]bool {
	out := map[string]bool{}
	w := walkTable(b, options.Snappy)
	for _, k := range w.keys {
		k = y.ParseKey(k)
		if bytes.HasPrefix(k, []byte(prefixMessage)) && len(k) >= 16 {
			if id, err := uuid.FromBytes(k[len(k)-16:]); err == nil {
				out[id.String()] = true
			}
		}
	}
	return out
}

// TestRepairSalvagesATableDamagedAtItsTail: a table of 14,000 messages cut
// or overwritten at its end (its index and footer) is refused at start,
// and cyan repair keeps every message of the blocks before the damage
// (today's repair kept none: it needed the index).
func TestRepairSalvagesATableDamagedAtItsTail(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 14,000 messages")
	}
	n := 14000
	if raceOn {
		n = 2000 // minutes under the race detector; the same code runs
	}
	base := t.TempDir()
	tmpl := filepath.Join(base, "tmpl")
	ids, sst := tableStore(t, tmpl, n)
	whole, err := os.ReadFile(sst)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(messagesIn(whole)); got != n {
		t.Fatalf("the table walks to %d messages, want %d", got, n)
	}
	cases := []struct {
		name string
		do   func([]byte) []byte
	}{
		// The messages' own keys (msg) sort after their indexes, in the
		// table's second half.
		{"cut at four fifths", func(b []byte) []byte { return b[:len(b)*4/5] }},
		{"its last quarter zeroed", func(b []byte) []byte {
			clear(b[len(b)*3/4:])
			return b
		}},
		{"its footer overwritten", func(b []byte) []byte {
			copy(b[len(b)-8:], "garbage!")
			return b
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(base, strings.ReplaceAll(c.name, " ", "-"))
			copyDir(t, tmpl, dir)
			damaged := c.do(slices.Clone(whole))
			path := filepath.Join(dir, "db", filepath.Base(sst))
			if err := os.WriteFile(path, damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			want := messagesIn(damaged) // those of the blocks before the damage
			if _, err := Open(Options{Dir: dir, tune: bigMemtable}); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), filepath.Base(sst)) {
				t.Fatalf("Open = %v, want the table named as damaged", err)
			}
			to := filepath.Join(base, "new-"+filepath.Base(dir))
			rep, err := salvage(dir, to, nil, bigMemtable)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d of %d messages recovered (%d in the blocks before the damage); %v", c.name, rep.Messages, n, len(want), rep.Unreadable)
			if rep.Messages != len(want) || len(want) == 0 {
				t.Errorf("repair kept %d messages, the blocks before the damage hold %d", rep.Messages, len(want))
			}
			if rep.Recorded != uint64(n) || rep.Lost() != n-rep.Messages {
				t.Errorf("repair reports %d recorded, %d lost; want %d, %d", rep.Recorded, rep.Lost(), n, n-rep.Messages)
			}
			s, err := Open(Options{Dir: to, tune: bigMemtable})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			found := 0
			for _, id := range ids {
				if _, err := s.Get(id); err == nil {
					found++
					if !want[id] {
						t.Errorf("message %s was not in a block that read", id)
					}
				}
			}
			if found != len(want) {
				t.Errorf("the repaired data dir has %d messages, want %d", found, len(want))
			}
		})
	}
}
