package mainvirtual

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/turn"
)

// fitText is the text of a context message as the model reads it: whole,
// unless the message alone outgrows the context budget (a pasted log, a
// 250 KB paste). Then its beginning is kept, as much as fits in the budget
// with the reference line, and the trace says so. Only such a message is
// cut; fitting the others is fit's work (compress, then drop).
func (a *assembler) fitText(it ctxItem, ct *turn.ContextTrace) string {
	m := it.m
	if it.full <= ct.Budget || m.Text == "" {
		return m.Text
	}
	ref := a.historyRef(m)
	tail := fmt.Sprintf("\n[… cut here: the message is %d tokens, more than the whole context budget (%d); the rest is stored, and opens with %s]", it.full-lineOverhead, ct.Budget, ref)
	budget := ct.Budget - lineOverhead - a.count.Count(tail)
	head := cutTokens(m.Text, budget, a.count.Count)
	shown := a.count.Count(head + tail)
	ct.Tokens -= it.full - (shown + lineOverhead)
	ct.Cut = append(ct.Cut, turn.CutItem{ID: m.ID, Tokens: it.full - lineOverhead, Shown: shown, Ref: ref})
	ct.Note = joinNote(ct.Note, fmt.Sprintf("message %s is over the context budget by itself; its first %d tokens are shown", m.ID, shown))
	return head + tail
}

// historyRef is the %[history/…] reference of a stored message (the open
// tool's, as recall shows them): its place among the channel's messages of
// people and the agent, counted from 1. Counting reads the channel up to
// the message, so it is done only for messages that are cut.
func (a *assembler) historyRef(m *store.Message) string {
	pos := 0
	err := a.store.Scan(m.Channel, "", func(x *store.Message) (bool, error) {
		if (x.Role == store.RoleUser || x.Role == store.RoleAssistant) && !x.Empty && x.Text != "" {
			pos++
		}
		return x.ID != m.ID, nil
	})
	if err != nil || pos == 0 {
		return fmt.Sprintf("message id %s (the history of %s)", m.ID, m.Channel)
	}
	return fmt.Sprintf("%%[history/%s/%s] message %d", m.Channel, m.Time.Format("2006-01-02"), pos)
}

// cutTokens is the longest beginning of s (ending at a line or word break
// where one is near) that counts at most budget tokens.
func cutTokens(s string, budget int, count func(string) int) string {
	if budget <= 0 {
		return ""
	}
	// No token is longer than 16 bytes in practice, so the search starts
	// there instead of counting the whole text again and again.
	lo, hi := 0, min(len(s), budget*16)
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		for mid > lo && mid < len(s) && !utf8.RuneStart(s[mid]) {
			mid--
		}
		if mid == lo {
			break
		}
		if count(s[:mid]) <= budget {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	head := s[:lo]
	if i := strings.LastIndexAny(head, "\n "); i > len(head)*9/10 {
		head = head[:i]
	}
	return head
}
