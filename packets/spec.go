package packets

import (
	"time"
)

// SectionItem is one item a source of the prompt considered for its
// section (a workspace item, an event record, a tool result), as the
// packet's trace shows it.
type SectionItem struct {
	ID       string `json:"id"`
	Tokens   int    `json:"tokens"`
	Included bool   `json:"included"`
	Reason   string `json:"reason,omitempty"`
}

// ObserverStatus is an observer as `cyan observers ls` and GET
// /api/v1/observers show it: its triggers, state, last and next run, and
// tokens spent against its budget (package observer fills it).
type ObserverStatus struct {
	Name       string    `json:"name"`
	Source     string    `json:"source"`
	Triggers   []string  `json:"triggers"`
	State      string    `json:"state"`
	LastRun    time.Time `json:"last_run,omitzero"`
	LastResult string    `json:"last_result,omitempty"`
	NextRun    time.Time `json:"next_run,omitzero"`
	Runs       int       `json:"runs"`
	Spent      int       `json:"tokens_spent"`
	Budget     int       `json:"token_budget"`
}
