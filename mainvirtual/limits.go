package mainvirtual

import (
	"time"

	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/turn"
)

// Limiter is the limit-process as main-virtual sees it (the daemon fills
// it with package limitproc). It is invisible until it fires; then its
// notices are stored after the answer as platform messages from
// LimitNotice.From ("<system name>-limit"), which the model reads as
// "^cyan-limit [time]: …" lines.
//
// A Limiter that is also a StreamLimiter polices the text as it is
// written, once: the live stream, the stored message, the voice and the
// bridges all get what its TextLimit released. A plain Limiter sees only
// the finished messages.
type Limiter interface {
	// Output sees one model output's messages (and what the call used)
	// before they are delivered, and returns the messages to deliver.
	Output(q turn.Query, parts []string, usage llm.Usage) ([]string, []turn.LimitNotice)
	// ToolCall is asked before each tool call; a non-empty refusal is
	// the call's result instead of running it.
	ToolCall(q turn.Query, call llm.ToolCall) (refusal string, notices []turn.LimitNotice)
	// Admit is asked before a turn calls the model: a positive wait refuses
	// the turn (its message is kept) with a *Limited error.
	Admit(q turn.Query) (wait time.Duration, reason string)
}

// StreamLimiter is a Limiter that polices text as it is written.
type StreamLimiter interface {
	Limiter
	// Stream is the limit on one model output's text.
	Stream(q turn.Query) turn.TextLimit
	// Finish polices the messages the TextLimit released through the rest
	// of the chain, and counts what the call used.
	Finish(q turn.Query, l turn.TextLimit, parts []string, usage llm.Usage) ([]string, []turn.LimitNotice)
}
