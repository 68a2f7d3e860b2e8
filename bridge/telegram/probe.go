package telegram

import (
	"context"
	"fmt"

	"github.com/cyan-agent/cyan/bridge"
)

var _ bridge.Prober = (*Adapter)(nil)

// Probe implements bridge.Prober with getMe: a bot whose updates stopped
// while the Bot API still answers is told apart from one the Bot API no
// longer knows (a revoked token).
func (a *Adapter) Probe(ctx context.Context) error {
	b := a.current()
	if b == nil {
		return bridge.ErrOffline
	}
	if _, err := b.GetMe(ctx); err != nil {
		return fmt.Errorf("getMe: %w", err)
	}
	return nil
}
