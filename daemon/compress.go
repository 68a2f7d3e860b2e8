package daemon

import (
	"context"

	"github.com/cyan-agent/cyan/mainvirtual"
	"github.com/cyan-agent/cyan/persona"
	"github.com/cyan-agent/cyan/script"
	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/turn"
)

// scriptCompressor is main-virtual's Compressor: the library's compress
// script (script.Library.Compress) on one message, for the agent.
type scriptCompressor struct {
	lib     *script.Library
	persona func() *persona.Persona
}

var _ mainvirtual.Compressor = (*scriptCompressor)(nil)

func (c *scriptCompressor) Compress(ctx context.Context, q turn.Query, m *store.Message) (string, string, error) {
	return c.lib.Compress(ctx, q.Channel, m.Text, c.persona().Name)
}
