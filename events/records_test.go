package events

import (
	"context"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/packets"
)

// TestRecordsScopes: a titled event is found in its conversation; a
// theory where its scope says — a public one everywhere, a
// conversation's there, the owner's only by the owner (OwnerOnly).
func TestRecordsScopes(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	f := newFixture(t, t0, testConfig())
	f.say(t, "g", "amy", "shall we go to the lake", t0)
	if _, err := f.log.CloseTopic("g", "amy planned the lake trip", t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	for _, th := range []struct {
		title string
		scope packets.Scope
	}{{"tides", packets.Scope{}}, {"the group's jokes", packets.Scope{Channel: "g"}}, {"alice's savings", packets.Scope{Owner: true}}} {
		if _, err := f.log.CreateTheory(th.title, th.title+": an article", nil, th.scope, t0); err != nil {
			t.Fatal(err)
		}
	}
	f.clk.Set(t0.Add(time.Hour))
	rs, err := f.log.Records(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		kind, channel string
		ownerOnly     bool
	}
	got := map[string]want{}
	for _, r := range rs {
		got[r.Source] = want{r.Kind, r.Channel, r.OwnerOnly}
	}
	for source, w := range map[string]want{
		"theory tides":             {packets.RecordTheory, "", false},
		"theory the group's jokes": {packets.RecordTheory, "g", false},
		"theory alice's savings":   {packets.RecordTheory, "", true},
	} {
		if got[source] != w {
			t.Errorf("%s: %+v, want %+v (all: %+v)", source, got[source], w, got)
		}
	}
	events := 0
	for _, r := range rs {
		if r.Kind == packets.RecordEvent {
			events++
			if r.Channel != "g" || r.Text != "amy planned the lake trip" || r.Source != "event "+f.log.cal.label(LevelEvent, r.Time) {
				t.Errorf("event record %+v", r)
			}
		}
	}
	if events != 1 {
		t.Errorf("%d event records: %+v", events, rs)
	}
}
