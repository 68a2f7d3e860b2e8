package bridge

import (
	"fmt"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/store"
)

// TestTheStoreLogsSurviveAReopen: owed turns, private writers and
// undelivered replies are kept in the store, per bridge, across a close
// and an open.
func TestTheStoreLogsSurviveAReopen(t *testing.T) {
	dir := t.TempDir()
	open := func() *store.Store { return openStoreIn(t, dir) }
	st := open()
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	owed, other := NewStoreOwed(st, "t"), NewStoreOwed(st, "u")
	_ = owed.Owe(OwedTurn{Channel: "t:private:1", MessageID: "a", At: at})
	_ = owed.Owe(OwedTurn{Channel: "t:private:1", MessageID: "b", At: at.Add(time.Second)}) // the newest replaces it
	_ = owed.Owe(OwedTurn{Channel: "t:group:2:9", MessageID: "c", At: at})
	_ = other.Owe(OwedTurn{Channel: "u:private:1", MessageID: "x", At: at})
	if err := owed.Paid("t:private:1", "a"); err != nil { // an older turn's end pays nothing
		t.Fatal(err)
	}
	who := NewStoreWho(st, "t")
	_ = who.Wrote(Writer{ID: "1", Name: "amy", Last: at})
	_ = who.Wrote(Writer{ID: "2", Name: "bob", Last: at.Add(time.Minute)})
	und := NewStoreUndelivered(st, "t")
	for i := range 12 {
		_ = und.Add(Undelivered{Channel: "t:private:1", Text: fmt.Sprint(i), At: at.Add(time.Duration(i) * time.Second)})
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st = open()
	defer st.Close()
	l, err := NewStoreOwed(st, "t").List()
	if err != nil || len(l) != 2 || l[0].MessageID != "c" || l[1].MessageID != "b" {
		t.Fatalf("owed = %+v %v", l, err)
	}
	_ = NewStoreOwed(st, "t").Paid("t:private:1", "b")
	if l, _ := NewStoreOwed(st, "t").List(); len(l) != 1 {
		t.Errorf("after paying b: %+v", l)
	}
	if l, _ := NewStoreOwed(st, "u").List(); len(l) != 1 || l[0].MessageID != "x" {
		t.Errorf("the other bridge's owed = %+v", l)
	}
	ws, _ := NewStoreWho(st, "t").List()
	if len(ws) != 2 || ws[0].ID != "2" {
		t.Errorf("writers = %+v, want bob first", ws)
	}
	us, _ := NewStoreUndelivered(st, "t").List()
	if len(us) != maxUndelivered || us[0].Text != "2" || us[len(us)-1].Text != "11" {
		t.Errorf("undelivered = %+v", us)
	}
}

// openStoreIn opens the store in dir, as a daemon does at each start: the
// tests of what survives a restart close it and open it again.
func openStoreIn(t *testing.T, dir string) *store.Store {
	t.Helper()
	st, err := store.Open(store.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return st
}
