package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// emptyVlogDir writes n short messages (none goes to the value log) and
// returns the acknowledged ids. killed: the files are copied while the
// store is open, as a kill -9 leaves them (the value log preallocated);
// else the store is stopped.
func emptyVlogDir(t *testing.T, dir string, n int, killed bool) []string {
	t.Helper()
	live := dir
	if killed {
		live = filepath.Join(t.TempDir(), "live")
	}
	s, err := Open(Options{Dir: live, tune: faultTune})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := 0; i < n; i += 10 {
		var batch []*Message
		for j := i; j < i+10; j++ {
			batch = append(batch, &Message{Channel: "c", Role: RoleUser, Text: fmt.Sprintf("short message %d", j)})
		}
		if err := s.Append(t0.Add(time.Duration(i)*time.Second), batch...); err != nil {
			t.Fatal(err)
		}
		for _, m := range batch {
			ids = append(ids, m.ID)
		}
	}
	if killed {
		copyDir(t, live, dir)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestADamagedEmptyValueLog: a value log that holds no value, damaged,
// either opens with every message or is refused naming it, and cyan
// repair then keeps every message.
func TestADamagedEmptyValueLog(t *testing.T) {
	for _, killed := range []bool{false, true} {
		tmpl := filepath.Join(t.TempDir(), "tmpl")
		acked := emptyVlogDir(t, tmpl, 200, killed)
		vlogs, _ := filepath.Glob(filepath.Join(tmpl, "db", "*.vlog"))
		if len(vlogs) != 1 {
			t.Fatalf("value logs %v, want one", vlogs)
		}
		if w, err := scanVlogFile(vlogs[0]); err != nil || w.end != walHeaderSize {
			t.Fatalf("the value log holds values (%+v, %v)", w, err)
		}
		for _, d := range []struct {
			name string
			do   func(string) error
		}{
			{"zeroed", zeroFile},
			{"truncated to half", truncateHalf},
			{"its header flipped", func(p string) error {
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				for i := range walHeaderSize {
					b[i] ^= 0x5a
				}
				return os.WriteFile(p, b, 0o600)
			}},
			{"cut to zero bytes", func(p string) error { return os.Truncate(p, 0) }},
		} {
			name := d.name + map[bool]string{false: " after a clean stop", true: " after a kill -9"}[killed]
			t.Run(name, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "d")
				copyDir(t, tmpl, dir)
				if err := d.do(filepath.Join(dir, "db", filepath.Base(vlogs[0]))); err != nil {
					t.Fatal(err)
				}
				s, err := Open(Options{Dir: dir, tune: faultTune})
				if err == nil {
					defer s.Close()
					for _, id := range acked {
						if _, err := s.Get(id); err != nil {
							t.Fatalf("opened, but message %s: %v", id, err)
						}
					}
					t.Logf("%s: opens with all %d messages", name, len(acked))
					return
				}
				var de *DamageError
				if !errors.As(err, &de) || !strings.Contains(err.Error(), filepath.Base(vlogs[0])) || !strings.Contains(err.Error(), "cyan repair NEW_DIR") {
					t.Fatalf("Open = %v, want the value log named", err)
				}
				to := filepath.Join(t.TempDir(), "new")
				rep, err := salvage(dir, to, nil, faultTune)
				if err != nil {
					t.Fatalf("repair: %v", err)
				}
				if rep.Messages != len(acked) {
					t.Errorf("repair kept %d of %d messages: %+v", rep.Messages, len(acked), rep)
				}
				s, err = Open(Options{Dir: to, tune: faultTune})
				if err != nil {
					t.Fatalf("the repaired data dir: %v", err)
				}
				defer s.Close()
				for _, id := range acked {
					if _, err := s.Get(id); err != nil {
						t.Fatalf("repaired, but message %s: %v", id, err)
					}
				}
				t.Logf("%s: refused (%s); repair keeps all %d messages (%v)", name, de.Problem, len(acked), rep.Unreadable)
			})
		}
	}
}
