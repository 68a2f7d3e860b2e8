package daemon

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/bridge"
	"github.com/cyan-agent/cyan/router"
	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/turn"
)

type fixedStart string

func (f fixedStart) ContextStart(context.Context, string, time.Time) (string, error) {
	return string(f), nil
}

// TestResetStartsTheContextAfterTheNewestResetLine: after /reset the
// context begins at its line, unless the topic start is later; a channel
// without one keeps the event log's start.
func TestResetStartsTheContextAfterTheNewestResetLine(t *testing.T) {
	st, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	t0 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	ch := "qq:group:1"
	first := &store.Message{Channel: ch, Role: store.RoleUser, User: "amy", Text: "old topic"}
	mark := &store.Message{Channel: ch, Role: store.RoleSystem, User: "system", Text: bridge.ResetNote("Amy")}
	after := &store.Message{Channel: ch, Role: store.RoleUser, User: "amy", Text: "new topic"}
	for i, m := range []*store.Message{first, mark, after} {
		if err := st.Append(t0.Add(time.Duration(i)*time.Minute), m); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, inner, channel, want string
	}{
		{"the reset is later than the topic", first.ID, ch, mark.ID},
		{"no topic start", "", ch, mark.ID},
		{"the topic is later than the reset", after.ID, ch, after.ID},
		{"no reset in the channel", first.ID, "qq:group:2", first.ID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := resetStart{inner: fixedStart(tc.inner), store: st}.ContextStart(context.Background(), tc.channel, t0.Add(time.Hour))
			if err != nil || got != tc.want {
				t.Errorf("start = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

type countWaker struct{ n int }

func (c *countWaker) ProactiveAs(context.Context, string, string, string, *turn.Principal, turn.Listener) (*turn.Result, error) {
	c.n++
	return &turn.Result{}, nil
}

// TestPausedWakerHoldsBackOnlyUnaskedSpeech: an observer's own turn in a
// paused chat does not run; a plan (no component) does, and so does any
// turn in a chat not paused.
func TestPausedWakerHoldsBackOnlyUnaskedSpeech(t *testing.T) {
	inner := new(countWaker)
	w := pausedWaker{mv: inner, paused: func(ch string) bool { return ch == "qq:group:1" }, log: slog.New(slog.DiscardHandler)}
	ctx := context.Background()
	speech := &turn.Principal{Owner: true, Component: "observer:mood"}
	if _, err := w.ProactiveAs(ctx, "qq:group:1", "group", "speak", speech, turn.Listener{}); err != nil || inner.n != 0 {
		t.Fatalf("unasked speech in a paused chat: %v, %d turns", err, inner.n)
	}
	w.ProactiveAs(ctx, "qq:group:1", "group", "plan due", &turn.Principal{Owner: true}, turn.Listener{})
	w.ProactiveAs(ctx, "qq:group:2", "group", "speak", speech, turn.Listener{})
	if inner.n != 2 {
		t.Errorf("%d turns, want the plan and the other chat's speech", inner.n)
	}
}

// stubAdapter is a platform that never connects.
type stubAdapter struct{}

func (stubAdapter) Platform() string { return "stub" }
func (stubAdapter) Run(ctx context.Context, _ bridge.Sink) error {
	<-ctx.Done()
	return nil
}
func (stubAdapter) Send(context.Context, bridge.Chat, bridge.Outgoing) (string, error) {
	return "", bridge.ErrOffline
}
func (stubAdapter) Typing(context.Context, bridge.Chat) error { return bridge.ErrUnsupported }

// TestAnOfflineAlertGoesToTheOwnerOnAnotherBridge: the alert of a bridge
// whose account went offline reaches the owner's private chat on the first
// other bridge that takes it, never the offline bridge itself.
func TestAnOfflineAlertGoesToTheOwnerOnAnotherBridge(t *testing.T) {
	mk := func(name string) *bridge.Bridge {
		b, err := bridge.New(bridge.Options{Name: name, Adapter: stubAdapter{}, Agent: nopAgent{},
			Attach: func(ctx context.Context, _ router.Component) error { <-ctx.Done(); return nil }})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var got []string
	bp := &bridgeParts{list: []*bridge.Bridge{mk("qq"), mk("tg"), mk("qq2")},
		owners: func() []string { return []string{"local", "id:qq:12345", "id:gone:1", "id:tg:987", "id:qq2:5"} },
		send: func(br *bridge.Bridge, user, text string) error {
			got = append(got, br.Name()+" "+user+" "+text)
			if br.Name() == "tg" {
				return errors.New("tg is down too")
			}
			return nil
		}}
	bp.alert("qq", "bridge qq: the account 10001 is offline")
	want := []string{"tg 987 bridge qq: the account 10001 is offline", "qq2 5 bridge qq: the account 10001 is offline"}
	if !slices.Equal(got, want) {
		t.Errorf("sent %q, want %q", got, want)
	}
}

// nopAgent is a companion that answers nothing.
type nopAgent struct{}

func (nopAgent) Record(context.Context, bridge.Inbound) (string, error)  { return "m", nil }
func (nopAgent) Answer(context.Context, bridge.Turn) error               { return nil }
func (nopAgent) Quoted(string) string                                    { return "" }
func (nopAgent) Note(context.Context, string, bridge.Kind, string) error { return nil }
func (nopAgent) Owner(string) bool                                       { return false }
func (nopAgent) Answered(string, string) bool                            { return false }
