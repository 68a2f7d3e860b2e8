package limitproc

import (
	"errors"
	"fmt"
	"time"

	"github.com/cyan-agent/cyan/config"
)

// Turn is what a stage knows of the turn it polices.
type Turn struct {
	Channel string
	Speaker string
	// Process is the policed process ("main-virtual" when empty).
	Process string
	Now     time.Time
}

func (t Turn) process() string {
	if t.Process == "" {
		return "main-virtual"
	}
	return t.Process
}

// Notice is a stage that fired: what it did, told to the agent.
type Notice struct {
	Stage string `json:"stage"`
	Text  string `json:"text"`
}

// Stage is one link of the chain. A stage implements any of OutputStage,
// CallStage and UsageStage.
type Stage interface{ Name() string }

// OutputStage sees an answer's outgoing messages before delivery and
// returns the ones to deliver; a non-empty notice means it fired.
type OutputStage interface {
	Stage
	Output(t Turn, parts []string) ([]string, string)
}

// CallStage is asked before each tool call; a non-empty refusal stops it.
type CallStage interface {
	Stage
	Call(t Turn, tool string) string
}

// UsageStage counts the tokens a model call used; a notice means it fired.
type UsageStage interface {
	Stage
	Spend(t Turn, tokens int) string
}

// AdmitStage is asked before a turn calls the model: a positive wait means
// the turn would only produce messages the stage drops, so the turn is
// refused (the incoming message is kept) with that wait and the reason.
type AdmitStage interface {
	Stage
	Admit(t Turn) (wait time.Duration, reason string)
}

// Chain is the limit-process. It is safe for concurrent use.
type Chain struct {
	name   string
	stages []Stage
}

// New builds the chain from the configuration, in the order of order.go.
func New(cfg config.Limits) (*Chain, error) {
	if cfg.Name == "" {
		cfg.Name = "cyan"
	}
	c := &Chain{name: cfg.Name}
	var errs []error
	for _, o := range order {
		s, err := o.build(cfg)
		if err != nil {
			errs = append(errs, fmt.Errorf("limitproc: %s: %w", o.name, err))
			continue
		}
		if s != nil {
			c.stages = append(c.stages, s)
		}
	}
	return c, errors.Join(errs...)
}

// Speaker is the name the limit-process speaks as: "<name>-limit".
func (c *Chain) Speaker() string { return c.name + "-limit" }

// Stages names the stages in force, in order.
func (c *Chain) Stages() []string {
	var out []string
	for _, s := range c.stages {
		out = append(out, s.Name())
	}
	return out
}

// Output runs an answer through the output stages.
func (c *Chain) Output(t Turn, parts []string) ([]string, []Notice) {
	var notes []Notice
	for _, s := range c.stages {
		if os, ok := s.(OutputStage); ok {
			var n string
			parts, n = os.Output(t, parts)
			if n != "" {
				notes = append(notes, Notice{Stage: s.Name(), Text: n})
			}
		}
	}
	return parts, notes
}

// Finish runs an answer whose text a Holdback already policed through
// the other output stages (the message rate): the forbidden patterns and
// the length limit are not applied twice; their notices come from h.
func (c *Chain) Finish(t Turn, h *Holdback, parts []string) ([]string, []Notice) {
	notes := h.Notices()
	for _, s := range c.stages {
		switch s.(type) {
		case *forbidden, *outputLength:
			continue
		}
		if os, ok := s.(OutputStage); ok {
			var n string
			parts, n = os.Output(t, parts)
			if n != "" {
				notes = append(notes, Notice{Stage: s.Name(), Text: n})
			}
		}
	}
	return parts, notes
}

// Parts is how many messages the channel may still be sent this minute
// (-1: no limit), so that a stream stops where the message rate would
// drop the rest.
func (c *Chain) Parts(t Turn) int {
	for _, s := range c.stages {
		if mr, ok := s.(*messageRate); ok {
			mr.w.mu.Lock()
			n := mr.max - mr.w.count(t.Channel, t.Now)
			mr.w.mu.Unlock()
			return max(n, 0)
		}
	}
	return -1
}

// Admit asks the admit stages whether a turn may run now; the longest wait
// wins.
func (c *Chain) Admit(t Turn) (time.Duration, string) {
	var wait time.Duration
	var reason string
	for _, s := range c.stages {
		if as, ok := s.(AdmitStage); ok {
			if w, r := as.Admit(t); w > wait {
				wait, reason = w, r
			}
		}
	}
	return wait, reason
}

// Call asks the call stages about a tool call; the first refusal stops it.
func (c *Chain) Call(t Turn, tool string) (string, []Notice) {
	for _, s := range c.stages {
		if cs, ok := s.(CallStage); ok {
			if r := cs.Call(t, tool); r != "" {
				return r, []Notice{{Stage: s.Name(), Text: r}}
			}
		}
	}
	return "", nil
}

// Spend counts a model call's tokens.
func (c *Chain) Spend(t Turn, tokens int) []Notice {
	var notes []Notice
	for _, s := range c.stages {
		if us, ok := s.(UsageStage); ok {
			if n := us.Spend(t, tokens); n != "" {
				notes = append(notes, Notice{Stage: s.Name(), Text: n})
			}
		}
	}
	return notes
}
