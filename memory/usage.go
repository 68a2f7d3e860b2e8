package memory

import (
	"context"
	"slices"
	"strings"
	"unicode"
)

// Usage records how one turn's use of the workspace was learnt.
type Usage struct {
	Turn      int64  `json:"turn"`
	Channel   string `json:"channel"`
	MessageID string `json:"message_id"`
	// Path is "tool" (the model called workspace_usage), "lexical" (it did
	// not; a word match of its answer against the items stood in) or "none"
	// (the workspace was empty).
	Path  string   `json:"path"`
	Used  []string `json:"used"`
	Maybe []string `json:"maybe"`
}

const usageLogSize = 256

// ReportUsage is the workspace_usage tool: the items the answer to message
// used (reviewed with D = 0) and those it may use next (D = 0.7). Ids the
// channel cannot see are returned as unknown.
func (m *Memory) ReportUsage(messageID string, v Viewer, used, maybe []string) (unknown []string, err error) {
	used, bad1 := m.filterVisible(v, used)
	maybe, bad2 := m.filterVisible(v, maybe)
	maybe = slices.DeleteFunc(maybe, func(id string) bool { return slices.Contains(used, id) })
	unknown = append(bad1, bad2...)
	if _, err := m.Review(used, DUsed); err != nil {
		return unknown, err
	}
	if _, err := m.Review(maybe, DMaybe); err != nil {
		return unknown, err
	}
	m.mu.Lock()
	m.logUsage(Usage{Turn: m.turn, Channel: v.Channel, MessageID: messageID, Path: "tool", Used: used, Maybe: maybe})
	m.mu.Unlock()
	return unknown, nil
}

func (m *Memory) filterVisible(v Viewer, ids []string) (ok, unknown []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range ids {
		id = strings.TrimSpace(id)
		if it, found := m.items[id]; found && v.sees(it.Origin) {
			if !slices.Contains(ok, id) {
				ok = append(ok, id)
			}
		} else {
			unknown = append(unknown, id)
		}
	}
	return ok, unknown
}

// TurnDone is what main-observer learns when a turn has been answered.
type TurnDone struct {
	Channel   string
	MessageID string // the incoming message the turn answered
	Answer    string // the agent's words, all steps joined
	// Owner and Private describe the turn's speaker, for which items it saw.
	Owner, Private bool
	// Reported is how the answer itself reported its workspace use:
	// "trailer" with Used and Maybe (the form its text carried), "tool"
	// (workspace_usage was called, and is in the usage log), or "" for
	// neither (the lexical match stands in).
	Reported    string
	Used, Maybe []string
}

func (d TurnDone) viewer() Viewer {
	return Viewer{Channel: d.Channel, Owner: d.Owner, Private: d.Private}
}

// AfterTurn is main-observer's work after a turn (SPEC §3): the use the
// answer reported in its trailer is applied; when the model reported
// nothing, a lexical match of its answer against the items stands in; then the turn counter T advances, passive GC runs
// over every item, and active GC brings the channel's workspace back within
// its budget. It returns what GC did.
func (m *Memory) AfterTurn(ctx context.Context, d TurnDone) ([]GCEvent, error) {
	m.mu.Lock()
	reported := false
	for i := len(m.usage) - 1; i >= 0; i-- {
		if m.usage[i].MessageID == d.MessageID && d.MessageID != "" {
			reported = true
			break
		}
	}
	var used, maybe []string
	path := "none"
	switch {
	case reported:
	case d.Reported == "trailer":
		path = "trailer"
		m.mu.Unlock()
		var bad []string
		used, bad = m.filterVisible(d.viewer(), d.Used)
		maybe, _ = m.filterVisible(d.viewer(), d.Maybe)
		maybe = slices.DeleteFunc(maybe, func(id string) bool { return slices.Contains(used, id) })
		if len(bad) > 0 {
			m.log.Info("usage trailer named items this conversation does not hold", "channel", d.Channel, "ids", bad)
		}
		m.mu.Lock()
	default:
		items := m.visible(d.viewer())
		if len(items) > 0 {
			path = "lexical"
			used, maybe = lexicalUse(d.Answer, items)
		}
	}
	m.mu.Unlock()
	if !reported {
		if _, err := m.Review(used, DUsed); err != nil {
			return nil, err
		}
		if _, err := m.Review(maybe, DMaybe); err != nil {
			return nil, err
		}
	}
	m.mu.Lock()
	if !reported {
		m.logUsage(Usage{Turn: m.turn, Channel: d.Channel, MessageID: d.MessageID, Path: path, Used: used, Maybe: maybe})
	}
	m.turn++
	m.tick(d)
	m.turnEnded(d.Channel)
	err := m.save(nil, nil)
	m.mu.Unlock()
	if err != nil {
		return nil, err
	}
	events, err := m.PassiveGC()
	if err != nil {
		return events, err
	}
	more, err := m.ActiveGC(ctx, d.viewer())
	return append(events, more...), err
}

// logUsage keeps the newest usage records. Callers hold m.mu.
func (m *Memory) logUsage(u Usage) {
	if u.Used == nil {
		u.Used = []string{}
	}
	if u.Maybe == nil {
		u.Maybe = []string{}
	}
	m.usage = append(m.usage, u)
	if over := len(m.usage) - usageLogSize; over > 0 {
		m.usage = slices.Delete(m.usage, 0, over)
	}
}

// UsageLog returns the newest usage records, oldest first.
func (m *Memory) UsageLog() []Usage {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.usage)
}

// Thresholds of the lexical fallback: the share of an item's terms that
// the answer contains.
const (
	lexicalUsed  = 0.5
	lexicalMaybe = 0.2
)

// lexicalUse guesses which items an answer used from shared terms (words,
// and character bigrams for Chinese and Japanese): an item most of whose
// terms appear is used, one with a fair share may be used.
func lexicalUse(answer string, items []*Item) (used, maybe []string) {
	have := terms(answer)
	if len(have) == 0 {
		return nil, nil
	}
	for _, it := range items {
		want := terms(it.Content + " " + it.Summary)
		if len(want) == 0 {
			continue
		}
		hit := 0
		for t := range want {
			if have[t] {
				hit++
			}
		}
		switch share := float64(hit) / float64(len(want)); {
		case share >= lexicalUsed:
			used = append(used, it.ID)
		case share >= lexicalMaybe:
			maybe = append(maybe, it.ID)
		}
	}
	return used, maybe
}

// terms splits text into lower-case words of two or more letters or digits,
// and bigrams of CJK characters.
func terms(s string) map[string]bool {
	out := map[string]bool{}
	var word []rune
	var prevCJK rune
	flush := func() {
		if len(word) >= 2 {
			out[string(word)] = true
		}
		word = word[:0]
	}
	for _, r := range strings.ToLower(s) {
		switch {
		case isCJK(r):
			flush()
			if prevCJK != 0 {
				out[string([]rune{prevCJK, r})] = true
			}
			prevCJK = r
			continue
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			word = append(word, r)
		default:
			flush()
		}
		prevCJK = 0
	}
	flush()
	return out
}

func isCJK(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)
}
