package daemon

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cyan-agent/cyan/generate"
	"github.com/cyan-agent/cyan/mainvirtual"
	"github.com/cyan-agent/cyan/persona"
	"github.com/cyan-agent/cyan/script"
	"github.com/cyan-agent/cyan/store"
)

// CompressScript is the prompt script main-virtual's messages are
// compressed with (built in; a persona may override it).
const CompressScript = "compress"

// scriptCompressor is main-virtual's Compressor: it runs the compress
// script on one message.
type scriptCompressor struct {
	lib     *script.Library
	persona func() *persona.Persona
}

var _ mainvirtual.Compressor = (*scriptCompressor)(nil)

// Compress runs the script with the message's text and the agent's name
// (only the inputs the script declares, so an override may take fewer).
// The value is the "summary" field of an object, or the text itself.
func (c *scriptCompressor) Compress(ctx context.Context, q mainvirtual.Query, m *store.Message) (string, string, error) {
	s, err := c.lib.Load(CompressScript)
	if err != nil {
		return "", "", err
	}
	in := s.Declared(map[string]any{"text": m.Text, "agent_name": c.persona().Name})
	res, err := s.Run(ctx, c.lib.Generator(), in, script.RunOptions{Channel: q.Channel})
	if err != nil {
		var ge *generate.Error
		if errors.As(err, &ge) {
			return "", ge.TraceID, err
		}
		return "", "", err
	}
	switch v := res.Value.(type) {
	case string:
		return v, res.TraceID, nil
	case map[string]any:
		if s, ok := v["summary"].(string); ok && strings.TrimSpace(s) != "" {
			return s, res.TraceID, nil
		}
	}
	return "", res.TraceID, fmt.Errorf("the %s script returned %s; it should return text or {\"summary\": text}", CompressScript, res.JSON)
}
