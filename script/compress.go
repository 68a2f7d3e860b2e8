package script

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cyan-agent/cyan/generate"
)

// CompressScript is the prompt script main-virtual's older messages are
// compressed with (built in; a persona may override it).
const CompressScript = "compress"

// Compress runs the compress script on one of the agent's messages, with
// its text and the agent's name (only the inputs the script declares, so
// an override may take fewer), in channel. The short line is the
// "summary" field of an object, or the text itself; traceID is the trace
// of the call ("" when none was kept).
func (l *Library) Compress(ctx context.Context, channel, text, agentName string) (summary, traceID string, err error) {
	s, err := l.Load(CompressScript)
	if err != nil {
		return "", "", err
	}
	in := s.Declared(map[string]any{"text": text, "agent_name": agentName})
	res, err := s.Run(ctx, l.gen, in, RunOptions{Channel: channel})
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
