package recall

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/store"
)

// HistoryPrefix starts a reference to a range of a channel's history, as
// results and the pulled-info area show it: "history/<channel>/<date>"
// with the location "message n ~ message m" (n, m count the channel's
// messages of people and the agent from 1).
const HistoryPrefix = "history/"

var messageRange = regexp.MustCompile(`^message\s*(\d{1,9})(?:\s*[~～-]\s*message\s*(\d{1,9}))?$`)

// maxOpen bounds the messages one opening shows.
const maxOpen = 200

// OpenHistory opens a history reference for r (the open tool): the range's
// messages, one "messageN:speaker [time]: text" line each. Only a
// conversation r may read (its infos: "history:own", or
// "history:channel:<name>") opens; any other is missing. One r may read
// and its audience may not (another conversation, opened in a group) is
// withheld until the owner confirms (packets.Reader.Withheld).
func OpenHistory(st *store.Store) func(ctx context.Context, r packets.Reader, ref, location string) (string, error) {
	return func(ctx context.Context, r packets.Reader, ref, location string) (string, error) {
		channel, from, to, err := parseHistoryRef(r, ref, location)
		if err != nil {
			return "", err
		}
		return openHistory(ctx, st, ref, channel, "", 0, from, to)
	}
}

// parseHistoryRef reads a history reference and its location for r: the
// channel, and the first and last message wanted.
func parseHistoryRef(r packets.Reader, ref, location string) (channel string, from, to int, err error) {
	rest, ok := strings.CutPrefix(ref, HistoryPrefix)
	i := strings.LastIndexByte(rest, '/')
	if !ok || i <= 0 {
		return "", 0, 0, fmt.Errorf("a history reference is %%[history/<channel>/<date>] message n ~ message m, not %%[%s]", ref)
	}
	channel = rest[:i]
	switch r.Sees(packets.InfoHistory, packets.Scope{Channel: channel}) {
	case packets.Deny:
		return "", 0, 0, fmt.Errorf("%%[%s]: %w", ref, ErrNoRef)
	case packets.Confirm: // the reader's, not its audience's: the owner confirms first
		return "", 0, 0, r.Withheld("%[" + ref + "]")
	}
	m := messageRange.FindStringSubmatch(strings.ToLower(strings.TrimSpace(location)))
	if m == nil {
		return "", 0, 0, fmt.Errorf("say which messages: %%[%s] message n ~ message m", ref)
	}
	from, _ = strconv.Atoi(m[1])
	to = from
	if m[2] != "" {
		to, _ = strconv.Atoi(m[2])
	}
	if from < 1 || to < from {
		return "", 0, 0, fmt.Errorf("message %d ~ message %d is empty; messages count from 1", from, to)
	}
	if to-from >= maxOpen {
		return "", 0, 0, fmt.Errorf("open at most %d messages at once", maxOpen)
	}
	return channel, from, to, nil
}

// openHistory shows messages from…to of channel, reading it after the
// message id after ("" from its start), whose recalled messages before it
// number pos.
func openHistory(ctx context.Context, st *store.Store, ref, channel, after string, pos, from, to int) (string, error) {
	var b strings.Builder
	err := st.Scan(channel, after, func(msg *store.Message) (bool, error) {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		if !indexable(msg) {
			return true, nil
		}
		pos++
		if pos >= from {
			writeHistoryLine(&b, pos, msg)
		}
		return pos < to, nil
	})
	if err != nil {
		return "", err
	}
	if b.Len() == 0 {
		return "", fmt.Errorf("%%[%s] has %d messages; message %d is past the end", ref, pos, from)
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

// writeHistoryLine writes message n as an opened range shows it.
func writeHistoryLine(b *strings.Builder, n int, m *store.Message) {
	speaker := m.User
	if speaker == "" {
		speaker = string(m.Role)
	}
	fmt.Fprintf(b, "message%d:%s [%s]: %s\n", n, speaker, m.Time.Format("2006-01-02 15:04"), m.Text)
}

// ErrNoRef means a reference names nothing the caller may open (whether
// it exists is not told).
var ErrNoRef = errors.New("nothing you may open has that name; copy the reference exactly as your prompt shows it")

// Run is a stretch of a channel's chat log given by its first and last
// message ids (inclusive), as the event log keeps a record's messages.
type Run struct{ First, Last string }

// Range is part of a run as a history reference shows it: Ref
// ("history/<channel>/<date>", the date of its first message) and Location
// ("message n ~ message m", numbered as OpenHistory numbers them).
type Range struct {
	Ref      string `json:"ref"`
	Location string `json:"location"`
	// Messages is how many messages it holds.
	Messages int `json:"messages"`
	from     int // the first message's number
}

// String is the range as the prompt and the open tool write it.
func (r Range) String() string { return "%[" + r.Ref + "] " + r.Location }

// HistoryRanges numbers runs of a channel's messages as history references
// that open: for each run, its messages that OpenHistory counts, cut into
// ranges of at most the messages one opening shows. A run whose messages
// are all gone (or none of them counted) has no range. It reads the channel
// from its first message up to the last message of the latest run, as
// OpenHistory does to number a range.
func HistoryRanges(ctx context.Context, st *store.Store, channel string, runs []Run) ([][]Range, error) {
	out := make([][]Range, len(runs))
	last := ""
	for _, r := range runs {
		last = max(last, r.Last)
	}
	if last == "" {
		return out, nil
	}
	pos := 0
	err := st.Scan(channel, "", func(m *store.Message) (bool, error) {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		if m.ID > last {
			return false, nil
		}
		if !indexable(m) {
			return true, nil
		}
		pos++
		for i, r := range runs {
			if m.ID < r.First || m.ID > r.Last {
				continue
			}
			rs := out[i]
			if n := len(rs); n > 0 && rs[n-1].Messages < maxOpen {
				rs[n-1].Messages++
				continue
			}
			out[i] = append(rs, Range{Ref: HistoryPrefix + channel + "/" + m.Time.Format("2006-01-02"), Messages: 1, from: pos})
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	for _, rs := range out {
		for j := range rs {
			rs[j].Location = rs[j].location()
		}
	}
	return out, nil
}
