package daemon

import (
	"context"
	"log/slog"
	"strings"

	"github.com/cyan-agent/cyan/mainvirtual"
	"github.com/cyan-agent/cyan/memory"
)

// mainObserver is main-observer's memory work: after each answered turn it
// runs the workspace's AfterTurn (usage fallback, T advancing, passive and
// active GC) in its own goroutine, in the order turns finished.
type mainObserver struct {
	mem     *memory.Memory
	log     *slog.Logger
	queue   chan memory.TurnDone
	stopped chan struct{} // closed when run returns
}

func newMainObserver(mem *memory.Memory, log *slog.Logger) *mainObserver {
	return &mainObserver{mem: mem, log: log, queue: make(chan memory.TurnDone, 1024), stopped: make(chan struct{})}
}

// afterTurn is main-virtual's hook: it hands the turn to the observer. It
// blocks only while a thousand turns are waiting, and never after the
// observer stopped. The caller's context does not matter: an answered turn
// counts even if its client went away.
func (o *mainObserver) afterTurn(_ context.Context, q mainvirtual.Query, res *mainvirtual.Result) {
	var words []string
	for _, m := range res.Replies {
		words = append(words, m.Text)
	}
	d := memory.TurnDone{Channel: q.Channel, MessageID: q.MessageID, Answer: strings.Join(words, "\n")}
	select {
	case o.queue <- d:
	case <-o.stopped:
	}
}

func (o *mainObserver) run(ctx context.Context) error {
	defer close(o.stopped)
	for {
		select {
		case <-ctx.Done():
			// Count the turns already answered; GC waits for the next start.
			for {
				select {
				case d := <-o.queue:
					o.process(ctx, d)
				default:
					return nil
				}
			}
		case d := <-o.queue:
			o.process(ctx, d)
		}
	}
}

func (o *mainObserver) process(ctx context.Context, d memory.TurnDone) {
	events, err := o.mem.AfterTurn(ctx, d)
	for _, e := range events {
		o.log.Info("workspace gc", "item", e.Item, "action", e.Action, "reason", e.Reason)
	}
	if err != nil {
		o.log.Error("after turn", "channel", d.Channel, "err", err)
	}
}
