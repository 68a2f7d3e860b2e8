package bridge

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// proberAdapter is the fake platform with a probe.
type proberAdapter struct {
	*fakeAdapter
	mu     sync.Mutex
	probes int
	answer error
}

func (p *proberAdapter) Probe(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.probes++
	return p.answer
}

func (p *proberAdapter) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.probes
}

// TestABusyBridgeThatGoesSilentIsProbedAndFlagged: after busy chats,
// silence for silent_after gets one probe and a flag in the status, which
// the next event clears; a probe that finds the account logged out makes
// the bridge offline; a chat that was never busy is never probed.
func TestABusyBridgeThatGoesSilentIsProbedAndFlagged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pa := &proberAdapter{}
		r := newRig(t, func(o *Options) {
			pa.fakeAdapter = o.Adapter.(*fakeAdapter)
			o.Adapter, o.SilentAfter = pa, 15*time.Minute
		})
		defer r.stop()
		r.say(grp, alice, text("one"))
		time.Sleep(time.Hour)
		synctest.Wait()
		if n := pa.count(); n != 0 || r.b.Status().Silent != "" {
			t.Fatalf("a quiet chat was probed %d times: %+v", n, r.b.Status())
		}
		for i := range 3 {
			r.say(grp, alice, text(fmt.Sprint("busy ", i)))
			time.Sleep(time.Minute)
		}
		time.Sleep(14 * time.Minute)
		synctest.Wait()
		if n := pa.count(); n != 1 {
			t.Fatalf("probes = %d after the silence, want 1", n)
		}
		st := r.b.Status()
		if !strings.Contains(st.Silent, "no event for 15m0s while the chats were busy; the platform says the account is online") || !st.Connected {
			t.Errorf("status = %+v", st)
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		if n := pa.count(); n != 1 {
			t.Errorf("probes = %d; a flagged silence is probed once", n)
		}
		r.say(grp, alice, text("back"))
		synctest.Wait()
		if st := r.b.Status(); st.Silent != "" {
			t.Errorf("an event did not clear the flag: %+v", st)
		}

		pa.mu.Lock()
		pa.answer = fmt.Errorf("get_status: %w", ErrAccountOffline)
		pa.mu.Unlock()
		r.say(grp, alice, text("a"))
		r.say(grp, alice, text("b"))
		time.Sleep(16 * time.Minute)
		synctest.Wait()
		st = r.b.Status()
		if !st.Offline || st.Connected || !strings.Contains(st.State, "offline: a probe found the account logged out") {
			t.Errorf("status after an offline probe = %+v", st)
		}
	})
}

// TestAnOfflineAccountHoldsItsAnswersAndAlertsOnce: while the account is
// offline the bridge reads as not connected, so the outbox waits; the
// owner is alerted once however often the platform repeats it.
func TestAnOfflineAccountHoldsItsAnswersAndAlertsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var alerts []string
		r := newRig(t, func(o *Options) { o.Alert = func(s string) { alerts = append(alerts, s) } })
		defer r.stop()
		w := r.sink.(AccountWatcher)
		w.AccountOffline("kicked offline: 下线通知")
		w.AccountOffline("the heartbeat says the account is offline")
		r.out.push("t:group:42", "", "held")
		time.Sleep(time.Minute)
		synctest.Wait()
		if sent := r.ad.sentSoFar(); len(sent) != 0 {
			t.Fatalf("sent %q while the account was offline", sent)
		}
		if st := r.b.Status(); !st.Offline || st.Connected || st.State != "offline: kicked offline: 下线通知" {
			t.Errorf("status = %+v", st)
		}
		w.AccountOnline()
		time.Sleep(time.Minute)
		synctest.Wait()
		if sent := r.ad.sentSoFar(); len(sent) != 1 {
			t.Errorf("sent %q after the account came back, want the held answer", sent)
		}
		if len(alerts) != 1 || !strings.Contains(alerts[0], "bridge t: the account 100 is offline (kicked offline: 下线通知)") {
			t.Errorf("alerts = %q", alerts)
		}
	})
}
