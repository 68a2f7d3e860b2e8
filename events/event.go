package events

import (
	"fmt"
	"math"
	"time"
)

// Level is the span of a record.
type Level string

// The levels, from the widest.
const (
	LevelYear  Level = "year"
	LevelMonth Level = "month"
	LevelWeek  Level = "week"
	LevelDay   Level = "day"
	LevelEvent Level = "event" // one topic of conversation
)

// Levels lists every level, widest first.
var Levels = []Level{LevelYear, LevelMonth, LevelWeek, LevelDay, LevelEvent}

// rollupLevels are the levels summarised from children, in the order a
// rollup run builds them.
var rollupLevels = []Level{LevelDay, LevelWeek, LevelMonth, LevelYear}

// ParseLevel checks a level name.
func ParseLevel(s string) (Level, error) {
	for _, l := range Levels {
		if string(l) == s {
			return l, nil
		}
	}
	return "", fmt.Errorf("%w: level %q is not one of year, month, week, day, event", ErrInvalid, s)
}

func (l Level) code() byte {
	switch l {
	case LevelEvent:
		return 1
	case LevelDay:
		return 2
	case LevelWeek:
		return 3
	case LevelMonth:
		return 4
	case LevelYear:
		return 5
	}
	return 0
}

func levelOfCode(b byte) Level {
	for _, l := range Levels {
		if l.code() == b {
			return l
		}
	}
	return ""
}

// Source points at the chat log a record stands for: its body.
type Source struct {
	Channel        string `json:"channel"`
	FirstMessageID string `json:"first_message_id"`
	LastMessageID  string `json:"last_message_id"`
}

// Run is a stretch of a channel's chat log that a record stands for, by
// its first and last message ids (inclusive); Label names the record it
// comes from when that is a child of the record ("" for the record itself).
type Run struct {
	Label string `json:"label,omitempty"`
	First string `json:"first"`
	Last  string `json:"last"`
}

// Event is a record of the log. An event-level record is one topic; a day,
// week, month or year record summarises its children.
type Event struct {
	ID    string `json:"id"`
	Level Level  `json:"level"`
	// Label is how the prompt names the record's time: 2025年, 2026年1月,
	// 20260208-20260214, 20260208 or 20260216 3:16.
	Label       string      `json:"label"`
	Title       string      `json:"title"`
	Importance  float64     `json:"importance"`
	MemoryState MemoryState `json:"memory_state"`
	Start       time.Time   `json:"start"`
	End         time.Time   `json:"end"`
	Source      Source      `json:"source"`
	// Runs are the messages the record stands for, in order: a topic's one
	// run (from its first message to its last); a day's, one per topic; a
	// week's, month's or year's, one per child (from the first message of
	// its first topic to the last of its last). Records written before runs
	// were kept have none: runs derives them (open.go).
	Runs []Run `json:"runs,omitempty"`
	// Children are the records this one includes: the events of a day, the
	// days of a week or month, the months of a year, or, for an event, the
	// earlier events it continues.
	Children []string `json:"children"`
	// Messages and Speakers describe a topic's chat log.
	Messages int      `json:"messages,omitempty"`
	Speakers []string `json:"speakers,omitempty"`
	// ClosedBy says what closed a topic: silence, tool or history.
	ClosedBy string `json:"closed_by,omitempty"`
	// Pending is the work still to do on the record (nil when none).
	Pending *Pending  `json:"pending,omitempty"`
	Written time.Time `json:"written"`
}

// Pending is what an event still waits for. A failed step is retried with
// backoff; the record stays, marked, until the step succeeds.
type Pending struct {
	Title     bool      `json:"title,omitempty"`   // title and importance
	Extract   bool      `json:"extract,omitempty"` // facts and relation lines
	Attempts  int       `json:"attempts,omitempty"`
	LastError string    `json:"last_error,omitempty"`
	NextTry   time.Time `json:"next_try,omitzero"`
}

// titled reports whether the record has its title and importance.
func (e *Event) titled() bool { return e.Pending == nil || !e.Pending.Title }

// MemoryState is a record's memory, in the formula family of SPEC §3:
// R = 0.9^(Δt/S) and, on review, S' = S·(1 + a·e^(−D)·(1 − R)). The
// workspace counts Δt in agent turns; a life story spans months in which the
// agent may say little, so the event log counts Δt in days since LastT.
// S is set when the record is written (importance raises it) and grows
// only when a later event includes this one or a recall hits it (Review).
type MemoryState struct {
	R     float64   `json:"r"` // at the time it was read
	S     float64   `json:"s"` // stability, in days
	D     float64   `json:"d"`
	A     float64   `json:"a"` // gain
	LastT time.Time `json:"last_t"`
}

// Gain is a, SPEC §3's default.
const Gain = 5.0

// baseStability is S, in days, of a record of importance 0; importance i
// multiplies it by 1 + Gain·i.
var baseStability = map[Level]float64{
	LevelEvent: 1, LevelDay: 2, LevelWeek: 7, LevelMonth: 30, LevelYear: 180,
}

// newMemory is the state of a record written at t with importance i.
func newMemory(level Level, importance float64, t time.Time) MemoryState {
	return MemoryState{S: baseStability[level] * (1 + Gain*importance), A: Gain, LastT: t}
}

// Retrievability is R at now: 0.9^(Δdays/S), 1 before LastT.
func (m MemoryState) Retrievability(now time.Time) float64 {
	if m.S <= 0 {
		return 0
	}
	days := now.Sub(m.LastT).Hours() / 24
	if days <= 0 {
		return 1
	}
	return math.Pow(0.9, days/m.S)
}

// review applies SPEC §3's review at now with difficulty d.
func (m *MemoryState) review(now time.Time, d float64) {
	r := m.Retrievability(now)
	a := m.A
	if a == 0 {
		a = Gain
	}
	m.S *= 1 + a*math.Exp(-d)*(1-r)
	m.D, m.A = d, a
	if now.After(m.LastT) {
		m.LastT = now
	}
}

// clamp01 keeps a model's score in [0, 1]; NaN is 0.
func clamp01(x float64) float64 {
	switch {
	case math.IsNaN(x) || x < 0:
		return 0
	case x > 1:
		return 1
	}
	return x
}
