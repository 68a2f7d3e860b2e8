package cmd

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// progress shows how far a long command is. On a terminal it redraws one
// bar in place; into a pipe or a log — where a carriage return makes a
// mess — it writes a plain line at each tenth, and one at the end.
type progress struct {
	w     io.Writer
	tty   bool
	label string
	now   func() time.Time
	began time.Time
	drawn time.Time
	tenth int // the last tenth written as a plain line
}

func newProgress(w io.Writer, label string) *progress {
	return &progress{w: w, tty: isTerminal(w), label: label, now: time.Now, began: time.Now()}
}

// show reports n items done, frac of the whole (0 when unknown); done is
// the last call (frac 1 when all went well).
func (p *progress) show(frac float64, n int, done bool) {
	now := p.now()
	frac = min(max(frac, 0), 1)
	rate := float64(n) / max(now.Sub(p.began).Seconds(), 1e-3)
	if !p.tty {
		tenth := int(frac * 10)
		if !done && (frac == 0 || tenth <= p.tenth || tenth >= 10) {
			return
		}
		p.tenth = tenth
		fmt.Fprintf(p.w, "%s: %3.0f%%  %d messages  %.0f/s\n", p.label, frac*100, n, rate)
		return
	}
	if !done && now.Sub(p.drawn) < 200*time.Millisecond {
		return
	}
	p.drawn = now
	const width = 30
	full := int(frac * width)
	bar := strings.Repeat("█", full) + strings.Repeat("░", width-full)
	fmt.Fprintf(p.w, "\r%s %3.0f%%  %d messages  %.0f/s ", bar, frac*100, n, rate)
	if done {
		fmt.Fprintln(p.w)
	}
}
