package memory

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/dgraph-io/badger/v4"
)

// An owner's private item decays by the owner's private turns only: a busy
// group does not fade it, the owner's own conversation does, exactly as
// R = 0.9^(Δt/S) says.
func TestItemsDecayByTheirScopesClock(t *testing.T) {
	cfg := testConfig()
	cfg.InitialStability = 8
	m := open(t, memStore(t), cfg, nil)
	ownerItem := Origin{Channel: "home", Speaker: "alice", Kind: "private", Owner: true}
	if _, err := m.Add(KindNote, "alice's passport expires in march", ownerItem); err != nil {
		t.Fatal(err)
	}
	groupItem := Origin{Channel: "qq:group:1", Speaker: "mallory", Kind: "group"}
	if _, err := m.Add(KindNote, "the group meets on fridays", groupItem); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r := func(id string) (float64, int64) {
		t.Helper()
		v, err := m.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		return v.R, v.T
	}
	for i := range 200 {
		d := TurnDone{Channel: "qq:group:1", MessageID: fmt.Sprint("g", i), Answer: "haha", Private: false}
		if _, err := m.AfterTurn(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	if got, clock := r("w1"); got != 1 || clock != 0 {
		t.Fatalf("after 200 group turns the owner's private item has R %v at its T %d; want 1 at 0", got, clock)
	}
	if got, clock := r("w2"); clock != 200 || math.Abs(got-math.Pow(0.9, 200.0/8)) > 1e-12 {
		t.Fatalf("the group's own item: R %v at T %d; want 0.9^(200/8) at 200", got, clock)
	}
	for i := range 200 {
		d := TurnDone{Channel: "home", MessageID: fmt.Sprint("h", i), Answer: "ok", Owner: true, Private: true}
		if _, err := m.AfterTurn(ctx, d); err != nil {
			t.Fatal(err)
		}
		if i == 9 { // ten owner turns: R exactly as the formula says
			if got, clock := r("w1"); clock != 10 || math.Abs(got-math.Pow(0.9, 10.0/8)) > 1e-12 {
				t.Fatalf("after 10 owner turns: R %v at T %d; want 0.9^(10/8) at 10", got, clock)
			}
		}
	}
	if got, clock := r("w1"); clock != 200 || math.Abs(got-math.Pow(0.9, 200.0/8)) > 1e-12 {
		t.Fatalf("after 200 owner turns: R %v at T %d; want 0.9^(200/8)", got, clock)
	}
	if got, clock := r("w2"); clock != 200 {
		t.Fatalf("the owner's private turns moved the group item's clock: R %v at T %d", got, clock)
	}
	if m.Turn() != 400 {
		t.Fatalf("global T = %d, want 400", m.Turn())
	}
}

// The owner's item said in a group is shown both there and in the owner's
// private chats: both conversations' turns count for it.
func TestOwnersGroupItemCountsBothScopes(t *testing.T) {
	m := open(t, memStore(t), testConfig(), nil)
	if _, err := m.Add(KindNote, "bring the slides", Origin{Channel: "tg:group:5", Speaker: "alice", Kind: "group", Owner: true}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	turns := []TurnDone{
		{Channel: "tg:group:5", MessageID: "a"},                               // the group: counts
		{Channel: "tg:group:5", MessageID: "b", Owner: true},                  // the owner in the group: counts
		{Channel: "home", MessageID: "c", Owner: true, Private: true},         // the owner in private: counts
		{Channel: "qq:group:9", MessageID: "d"},                               // another group: does not
		{Channel: "qq:private:7", MessageID: "e", Private: true},              // a stranger's private chat: does not
		{Channel: "tg:private:1", MessageID: "f", Owner: true, Private: true}, // the owner elsewhere in private: counts
	}
	for _, d := range turns {
		if _, err := m.AfterTurn(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	if v, _ := m.Get("w1"); v.T != 4 {
		t.Fatalf("T = %d, want 4", v.T)
	}
}

// A store written with one global T moves its items onto their own
// clocks with the Δt they had.
func TestClocksMigrateKeepingDeltaT(t *testing.T) {
	st := memStore(t)
	m := open(t, st, testConfig(), nil)
	if _, err := m.Add(KindNote, "an old note", private); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := m.AfterTurn(context.Background(), TurnDone{Channel: "home", MessageID: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := m.Get("w1")
	// Make the store look as it did before clocks existed: global T 7, the
	// item last reviewed at 4 (Δt 3).
	m.mu.Lock()
	m.items["w1"].State.LastT = 4
	err := m.save([]*Item{m.items["w1"]}, nil)
	m.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	err = st.DB().Update(func(txn *badger.Txn) error {
		if err := txn.Delete(keyClocks); err != nil {
			return err
		}
		return txn.Set(keyTurn, []byte("7"))
	})
	if err != nil {
		t.Fatal(err)
	}
	m2 := open(t, st, testConfig(), nil)
	after, _ := m2.Get("w1")
	if math.Abs(after.R-before.R) > 1e-12 || after.T-after.State.LastT != 3 {
		t.Fatalf("migrated: R %v (was %v), Δt %d", after.R, before.R, after.T-after.State.LastT)
	}
}

// The usage trailer the answer carried is applied after the turn, as a
// workspace_usage call would be, and logged as such.
func TestAfterTurnAppliesTheUsageTrailer(t *testing.T) {
	m := open(t, memStore(t), testConfig(), nil)
	owner := Origin{Channel: "home", Speaker: "alice", Kind: "private", Owner: true}
	m.Add(KindNote, "alice's cat is named nyalia", owner)
	m.Add(KindNote, "alice likes tea", owner)
	ctx := context.Background()
	done := func(id string) TurnDone {
		return TurnDone{Channel: "home", MessageID: id, Answer: "ok", Owner: true, Private: true}
	}
	for i := range 8 {
		if _, err := m.AfterTurn(ctx, done(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := m.Get("w1")
	d := done("m9")
	d.Reported, d.Used, d.Maybe = "trailer", []string{"w1", "w7"}, []string{"w2"}
	if _, err := m.AfterTurn(ctx, d); err != nil {
		t.Fatal(err)
	}
	after, _ := m.Get("w1")
	r := math.Pow(0.9, 8/before.State.S)
	if want := before.State.S * (1 + 5*(1-r)); math.Abs(after.State.S-want) > 1e-12 || after.State.LastT != 8 {
		t.Fatalf("S %v last_T %d, want %v at 8", after.State.S, after.State.LastT, want)
	}
	if w2, _ := m.Get("w2"); w2.State.D != DMaybe || w2.State.LastT != 8 {
		t.Fatalf("maybe item: %+v", w2.State)
	}
	log := m.UsageLog()
	if u := log[len(log)-1]; u.Path != "trailer" || u.MessageID != "m9" || len(u.Used) != 1 {
		t.Fatalf("usage log: %+v", u)
	}
}
