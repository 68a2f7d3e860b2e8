package bridge

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cyan-agent/cyan/store"
)

// memPaused is a pause log in memory.
type memPaused struct{ m map[string]bool }

func (p *memPaused) SetPaused(ch string, on bool) error {
	if on {
		p.m[ch] = true
	} else {
		delete(p.m, ch)
	}
	return nil
}

func (p *memPaused) Paused() ([]string, error) {
	var out []string
	for ch := range p.m {
		out = append(out, ch)
	}
	slices.Sort(out)
	return out, nil
}

// TestStorePaused: the store's pause log keeps and clears a chat.
func TestStorePaused(t *testing.T) {
	st, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	log, other := NewStorePaused(st, "t"), NewStorePaused(st, "u")
	for _, ch := range []string{"t:group:42", "t:group:43"} {
		if err := log.SetPaused(ch, true); err != nil {
			t.Fatal(err)
		}
	}
	if err := log.SetPaused("t:group:43", false); err != nil {
		t.Fatal(err)
	}
	if got, _ := log.Paused(); !slices.Equal(got, []string{"t:group:42"}) {
		t.Errorf("paused = %q", got)
	}
	if got, _ := other.Paused(); len(got) != 0 {
		t.Errorf("another bridge's = %q", got)
	}
}

// TestThePauseOutlivesARestart: the owner's /pause is kept in the pause
// log; a bridge built anew over it is still paused in that chat (no
// chime-in), and /resume clears it.
func TestThePauseOutlivesARestart(t *testing.T) {
	log := &memPaused{m: map[string]bool{}}
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, func(o *Options) { o.Paused = log })
		r.agent.owners["t:9"] = true
		r.say(grp, owner, text("/pause"))
		synctest.Wait()
		r.stop()
		if got, _ := log.Paused(); !slices.Equal(got, []string{"t:group:42"}) {
			t.Fatalf("paused = %q", got)
		}
		r = newRig(t, func(o *Options) {
			o.Paused, o.Rand = log, func() float64 { return 0 }
			o.Manners.ChimeIn = 1
		})
		r.agent.owners["t:9"] = true
		r.say(grp, alice, text("nice weather"))
		time.Sleep(time.Minute)
		synctest.Wait()
		if _, turns, _ := r.agent.snapshot(); len(turns) != 0 {
			t.Errorf("turns %+v in a paused chat after a restart", turns)
		}
		r.say(grp, owner, text("/resume"))
		synctest.Wait()
		r.say(grp, alice, text("still nice"))
		time.Sleep(time.Minute)
		synctest.Wait()
		if _, turns, _ := r.agent.snapshot(); len(turns) != 1 {
			t.Errorf("turns %+v after /resume, want the chime-in", turns)
		}
		r.stop()
		if got, _ := log.Paused(); len(got) != 0 {
			t.Errorf("paused after /resume = %q", got)
		}
		if sent := r.ad.sentSoFar(); len(sent) != 1 {
			t.Errorf("answers = %q, want this bridge's one: to /resume", sent)
		}
	})
}
