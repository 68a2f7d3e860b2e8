package bridge

import (
	"testing"
	"testing/synctest"
	"time"
)

func TestATurnCutByARestartRunsOnceAfterIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		owed := newMemOwed()
		agent := &fakeAgent{owners: map[string]bool{}, gate: make(chan struct{})}
		start := func() *rig {
			return newRig(t, func(o *Options) { o.Owed, o.Agent = owed, agent })
		}
		r := start()
		r.agent = agent
		dm := Chat{Kind: Private, ID: "7"}
		grp := Chat{Kind: Group, ID: "42"}
		r.say(dm, User{ID: "7", Name: "amy"}, text("are you there?"))
		r.say(grp, User{ID: "8", Name: "bob"}, text("just chatting")) // not addressed: owes nothing
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if _, turns, _ := agent.snapshot(); len(turns) != 1 {
			t.Fatalf("%d turns before the stop", len(turns))
		}
		r.stop() // the daemon stops mid-turn
		for restart := 1; restart <= 2; restart++ {
			r = start()
			time.Sleep(5 * time.Second)
			synctest.Wait()
			_, turns, _ := agent.snapshot()
			if len(turns) != 2 {
				t.Fatalf("restart %d: %d turns in all, want 2 (the cut one, once more)", restart, len(turns))
			}
			if last := turns[1]; last.Channel != "t:private:7" || last.MessageID != turns[0].MessageID || last.SpeakerID != "t:7" {
				t.Errorf("restart %d: resumed %+v", restart, last)
			}
			if restart == 1 {
				agent.gate <- struct{}{} // this time the turn ends
				synctest.Wait()
			}
			r.stop()
		}
		if l, _ := owed.List(); len(l) != 0 {
			t.Errorf("still owed: %+v", l)
		}
	})
}

func TestOldOrAnsweredOwedTurnsDoNotRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		owed := newMemOwed()
		now := time.Now()
		_ = owed.Owe(OwedTurn{Channel: "t:private:1", MessageID: "old", SpeakerID: "t:1", At: now.Add(-time.Hour)})
		_ = owed.Owe(OwedTurn{Channel: "t:private:2", MessageID: "done", SpeakerID: "t:2", At: now.Add(-time.Minute)})
		_ = owed.Owe(OwedTurn{Channel: "t:group:3:9", MessageID: "fresh", SpeakerID: "t:3", At: now.Add(-time.Minute)})
		agent := &fakeAgent{owners: map[string]bool{}, answered: map[string]bool{"done": true}}
		r := newRig(t, func(o *Options) { o.Owed, o.Agent = owed, agent })
		defer r.stop()
		time.Sleep(10 * time.Second)
		synctest.Wait()
		_, turns, _ := agent.snapshot()
		if len(turns) != 1 || turns[0].Channel != "t:group:3:9" || turns[0].MessageID != "fresh" {
			t.Errorf("turns = %+v, want only the fresh one (in its topic)", turns)
		}
		st := r.b.Status()
		if len(st.Stale) != 1 || st.Stale[0].MessageID != "old" {
			t.Errorf("stale = %+v", st.Stale)
		}
		l, _ := owed.List()
		if len(l) != 1 || l[0].MessageID != "old" {
			t.Errorf("owed after start = %+v, want only the old one", l)
		}
	})
}
