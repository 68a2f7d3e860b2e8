package mainvirtual

import (
	"testing"

	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/turn"
)

// TestQueryCaller: a turn calls tools as its speaker, under main-virtual;
// a proactive turn acts for its principal — a plan's maker, or an
// observer under its own permission object.
func TestQueryCaller(t *testing.T) {
	q := turn.Query{Channel: "qq:group:1", Speaker: "amy", SpeakerID: "qq:2", Kind: turn.KindGroup, MessageID: "m1"}
	for _, tc := range []struct {
		name string
		For  *turn.Principal
		want packets.Caller
	}{
		{"the speaker", nil, packets.Caller{Channel: "qq:group:1", Speaker: "amy", SpeakerID: "qq:2", Kind: turn.KindGroup, Process: turn.Process, CallID: "c1", MessageID: "m1"}},
		{"a plan's maker", &turn.Principal{Speaker: "alice", SpeakerID: "qq:1", Owner: true},
			packets.Caller{Channel: "qq:group:1", Speaker: "alice", SpeakerID: "qq:1", Kind: turn.KindGroup, Owner: true, Process: turn.Process, CallID: "c1", MessageID: "m1"}},
		{"an observer", &turn.Principal{Component: "observer:water"},
			packets.Caller{Channel: "qq:group:1", Kind: turn.KindGroup, Process: "observer:water", CallID: "c1", MessageID: "m1"}},
	} {
		q.For = tc.For
		if got := q.Caller("c1"); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
