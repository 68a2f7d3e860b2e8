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
// Only the delivered messages are policed: a live stream shows the
// model's text as it comes, and the stored and delivered replies are the
// policed ones.
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
