package mainvirtual

import (
	"context"
	"errors"
	"time"

	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/turn"
)

// TurnEnd is how a turn ended, for the metrics.
type TurnEnd struct {
	Channel   string
	Kind      string // private or group
	Proactive bool
	// Outcome is "answered" (its first answer was stored), "interrupted"
	// (its context ended first: the daemon stopping) or "failed".
	Outcome string
	// Took is from the turn's start (its message stored) to its end.
	Took time.Duration
}

func (mv *MainVirtual) ended(ctx context.Context, msg *store.Message, q Query, res *turn.Result, err error) {
	if mv.onTurnEnd == nil {
		return
	}
	e := TurnEnd{Channel: msg.Channel, Kind: q.Kind, Proactive: msg.Proactive, Took: mv.now().Sub(q.Now), Outcome: "answered"}
	switch {
	case err == nil:
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		e.Outcome = "interrupted"
	default:
		e.Outcome = "failed"
	}
	if err == nil && res == nil {
		e.Outcome = "failed"
	}
	mv.onTurnEnd(e)
}
