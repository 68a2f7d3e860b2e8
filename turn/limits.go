package turn

import (
	"time"

	"github.com/cyan-agent/cyan/store"
)

// Limited is a turn the limit-process refused before asking the model: its
// incoming message is stored, and the caller may try again after
// RetryAfter (the API answers 429 with Retry-After).
type Limited struct {
	Message    *store.Message
	RetryAfter time.Duration
	Reason     string
}

func (e *Limited) Error() string { return "mainvirtual: limited: " + e.Reason }

// LimitNotice is a limit that fired.
type LimitNotice struct {
	From string `json:"from"`
	Text string `json:"text"`
}
