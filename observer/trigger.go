package observer

import (
	"fmt"
	"github.com/cyan-agent/cyan/clock"
	"strings"
	"time"
)

// Activity event names, as ISDK names its triggers.
const (
	AfterUserMessage = "AfterUserMessage" // a user message was stored
	AfterAIResponse  = "AfterAIResponse"  // main-virtual answered a turn
	MemoryChanged    = "MemoryChanged"    // the workspace or its plans changed
	Keyword          = "Keyword"          // a user message contains a keyword
	AtStartup        = "AtStartup"        // the daemon has started
	BeforeShutdown   = "BeforeShutdown"   // the daemon is stopping
)

var activityNames = []string{AfterUserMessage, AfterAIResponse, MemoryChanged, Keyword, AtStartup, BeforeShutdown}

// Trigger is one way an observer fires. Exactly one of Cron, At, On or
// Every is set; an observer may have several triggers, and any of them
// fires it. Every observer can also be called by name.
type Trigger struct {
	// Cron is a cron expression (five fields, or @hourly, @daily, @every 2h…).
	Cron string `json:"cron,omitempty" yaml:"cron"`
	// At is a one-off time.
	At time.Time `json:"at,omitzero" yaml:"at"`
	// On is an activity event name; with Keyword, Keywords lists the words.
	On       string   `json:"on,omitempty" yaml:"on"`
	Keywords []string `json:"keywords,omitempty" yaml:"keywords"`
	// Every is the cadence of a self-decided observer: this often it asks
	// itself whether to act now.
	Every time.Duration `json:"every,omitempty" yaml:"every"`

	schedule clock.Schedule
}

// MinEvery bounds how often a self-decided observer may ask itself.
const MinEvery = time.Minute

// check validates the trigger and compiles its schedule.
func (t *Trigger) check() error {
	set := 0
	if t.Cron != "" {
		set++
		s, err := clock.ParseCron(t.Cron)
		if err != nil {
			return fmt.Errorf("cron: %w", err)
		}
		t.schedule = s
	}
	if !t.At.IsZero() {
		set++
	}
	if t.On != "" {
		set++
		known := false
		for _, n := range activityNames {
			known = known || n == t.On
		}
		if !known {
			return fmt.Errorf("unknown event %q; use one of %s", t.On, strings.Join(activityNames, ", "))
		}
		if t.On == Keyword && len(t.Keywords) == 0 {
			return fmt.Errorf("a Keyword trigger needs keywords")
		}
	}
	if t.Every != 0 {
		set++
		if t.Every < MinEvery {
			return fmt.Errorf("every %s is too often for a self-decided observer; the least is %s", t.Every, MinEvery)
		}
	}
	if set != 1 {
		return fmt.Errorf("a trigger sets exactly one of cron, at, on, every")
	}
	return nil
}

// timed reports whether the trigger fires by the clock.
func (t *Trigger) timed() bool { return t.schedule != nil || !t.At.IsZero() || t.Every != 0 }

// next is the first firing strictly after from (zero when there is none).
func (t *Trigger) next(from time.Time) time.Time {
	switch {
	case t.schedule != nil:
		return t.schedule.Next(from)
	case !t.At.IsZero():
		if t.At.After(from) {
			return t.At
		}
	case t.Every != 0:
		return from.Add(t.Every)
	}
	return time.Time{}
}

// String describes the trigger for listings.
func (t Trigger) String() string {
	switch {
	case t.Cron != "":
		return "cron " + t.Cron
	case !t.At.IsZero():
		return "at " + t.At.Format(time.RFC3339)
	case t.On == Keyword:
		return "on Keyword " + strings.Join(t.Keywords, "|")
	case t.On != "":
		return "on " + t.On
	case t.Every != 0:
		return "self-decided every " + t.Every.String()
	}
	return "call"
}

// matches reports whether an activity event fires the trigger, and the
// keyword it matched.
func (t *Trigger) matches(e Event) (bool, string) {
	if t.On == "" {
		return false, ""
	}
	if t.On == Keyword {
		if e.Name != AfterUserMessage {
			return false, ""
		}
		low := strings.ToLower(e.Text)
		for _, k := range t.Keywords {
			if k != "" && strings.Contains(low, strings.ToLower(k)) {
				return true, k
			}
		}
		return false, ""
	}
	return t.On == e.Name, ""
}
