package mainvirtual

import (
	"testing"
	"time"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/limitproc"
	"github.com/cyan-agent/cyan/turn"
)

// benchFirstToken measures what the way out adds before the first token
// of an answer is shown: a fresh outflow per answer (as each model call
// makes), its first fragment written, until the first text is emitted.
// Tokens arrive as a provider streams them: a few characters each.
func benchFirstToken(b *testing.B, limits config.Limits) {
	chain, err := limitproc.New(limits)
	if err != nil {
		b.Fatal(err)
	}
	turns := limitproc.Turns{Chain: chain, Now: func() time.Time { return time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC) }}
	q := turn.Query{Channel: "home"}
	tokens := []string{"Good", " morning", "!", " The", " run", " went", " well", ",", " I", " think", "."}
	held := 0
	b.ReportAllocs()
	for b.Loop() {
		shown := false
		o := newOutflow("青蓝", false, turns.Stream(q), func(e turn.StreamEvent) error {
			shown = shown || e.Text != ""
			return nil
		}, nil)
		n := 0
		for _, tok := range tokens {
			if err := o.write(tok); err != nil {
				b.Fatal(err)
			}
			n++
			if shown {
				break
			}
		}
		if !shown {
			o.close()
		}
		held = n
	}
	b.ReportMetric(float64(held), "tokens-to-first-text")
}

// BenchmarkFirstVisibleToken: the default limit chain (max_output_chars,
// messages_per_minute; no forbidden patterns).
func BenchmarkFirstVisibleToken(b *testing.B) { benchFirstToken(b, config.Defaults().Limits) }

// BenchmarkFirstVisibleTokenForbidden: the default chain with three
// forbidden patterns, one of them unbounded (held UnboundedHold runes).
func BenchmarkFirstVisibleTokenForbidden(b *testing.B) {
	l := config.Defaults().Limits
	l.Forbidden = []string{`sk-[A-Za-z0-9]{20,48}`, `\b\d{3}-\d{4}-\d{4}\b`, `ghp_[A-Za-z0-9]{36}`}
	benchFirstToken(b, l)
}

// BenchmarkFirstVisibleTokenBare is the same stream without a limit, for
// comparison: what the cleaner and the markup filter cost alone.
func BenchmarkFirstVisibleTokenBare(b *testing.B) {
	tokens := []string{"Good", " morning", "!"}
	b.ReportAllocs()
	for b.Loop() {
		shown := false
		o := newOutflow("青蓝", false, nil, func(e turn.StreamEvent) error { shown = shown || e.Text != ""; return nil }, nil)
		for _, tok := range tokens {
			o.write(tok)
			if shown {
				break
			}
		}
	}
}
