package mainvirtual

import (
	"context"
	"time"
)

// ContextStarter says where a channel's context may begin. SPEC §2: the
// context runs from the start of the previous topic to the current message;
// the persona's context_count and the context budget still bound it. The
// event log implements it; without one the context is bounded only by
// those two.
type ContextStarter interface {
	// ContextStart returns the id of the oldest message the context may
	// hold ("" for no bound). now is the turn's time.
	ContextStart(ctx context.Context, channel string, now time.Time) (string, error)
}
