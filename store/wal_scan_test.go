package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// beyondByteByByte is the scan past a log's end as it was before zero runs
// were passed at once: every byte tried.
func beyondByteByByte(b []byte, end int64, vlog bool) int64 {
	for o := int(end) + 1; o < len(b); o++ {
		if !plausibleEntry(b[o:], vlog) {
			continue
		}
		if _, n := walEntry(b, o); n > 0 {
			return int64(o)
		}
	}
	return 0
}

// TestTheScanPastTheEndFindsWhatEveryByteFinds: on a running store's real
// write-ahead log and value log, whole and with runs of zeros written over
// one of their entries (the damage the scan is for), passing zero runs at once
// finds the same end and the same finished writes beyond it as trying
// every byte.
func TestTheScanPastTheEndFindsWhatEveryByteFinds(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir, tune: faultTune})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var msgs []*Message
	for i := range 400 {
		text := "a line of talk"
		if i%50 == 0 {
			text = strings.Repeat("a long message for the value log ", 3000)
		}
		msgs = append(msgs, &Message{Channel: "c", User: "u", Text: text, Time: t0.Add(time.Duration(i) * time.Second)})
	}
	if _, err := s.Import(msgs); err != nil {
		t.Fatal(err)
	}
	checked := map[bool]int{}
	for _, pattern := range []string{"*.mem", "*.vlog"} {
		vlog := pattern == "*.vlog"
		files, _ := filepath.Glob(filepath.Join(dir, "db", pattern))
		for _, f := range files {
			if checked[vlog] > 0 {
				break // one file of each kind is enough
			}
			whole, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if w := scanLog(whole, vlog); w.end <= walHeaderSize {
				continue // an empty log: nothing to damage
			}
			// The entries' places: a run of zeros over one of them ends
			// right where the next begins, the edge a skip must not pass.
			var starts []int
			for off := walHeaderSize; ; {
				_, n := walEntry(whole, off)
				if n == 0 {
					break
				}
				starts = append(starts, off)
				off += n
			}
			for v := range 4 {
				b := append([]byte(nil), whole...)
				if v > 0 && len(starts) > 2 {
					i := 1 + v*(len(starts)-2)/4
					clear(b[starts[i]:starts[i+1]])
				}
				w := scanLog(b, vlog)
				if want := beyondByteByByte(b, w.end, vlog); w.beyond != want {
					t.Fatalf("%s, variant %d: finished writes beyond byte %d found at %d, every byte finds %d", filepath.Base(f), v, w.end, w.beyond, want)
				}
				if w.beyond > 0 {
					checked[vlog]++
				}
			}
		}
	}
	if checked[false] == 0 || checked[true] == 0 {
		t.Fatalf("no damaged write-ahead log (%d) or value log (%d) had writes beyond its damage: the test checks nothing", checked[false], checked[true])
	}
}
