package bridge

import (
	"context"
	"errors"
	"time"

	"github.com/cyan-agent/cyan/store"
)

// StoreHistory answers what a bridge asks of the stored conversation —
// Agent.Quoted and Agent.Answered, Recaller and Quoter — from the store;
// an Agent embeds it beside what it does with main-virtual.
type StoreHistory struct {
	Store *store.Store
	Now   func() time.Time // when a recall is marked; nil: time.Now
}

// answeredScan bounds how many messages after the asked one Answered
// reads before it gives up.
const answeredScan = 2000

// Quoted is the platform id of the message the stored message id quotes,
// when it is of the same chat.
func (h StoreHistory) Quoted(id string) string {
	m, err := h.Store.Get(id)
	if err != nil || len(m.Quotes) == 0 {
		return ""
	}
	q, err := h.Store.Get(m.Quotes[0])
	if err != nil || q.Channel != m.Channel {
		return ""
	}
	return q.ExternalID
}

// Answered reports whether the agent spoke in the channel after the
// message: a final reply (one that calls no tool) or its choice to say
// nothing. A turn cut mid-way left at most tool calls and their results.
func (h StoreHistory) Answered(channel, id string) bool {
	answered, n := false, 0
	err := h.Store.Scan(channel, id, func(m *store.Message) (bool, error) {
		n++
		if m.Role == store.RoleAssistant && len(m.ToolCalls) == 0 {
			answered = true
			return false, nil
		}
		return n < answeredScan, nil
	})
	return err == nil && answered
}

// Recall marks a message withdrawn on its platform (Recaller).
func (h StoreHistory) Recall(_ context.Context, channel, externalID string) error {
	now := time.Now
	if h.Now != nil {
		now = h.Now
	}
	_, err := h.Store.MarkRecalled(channel, externalID, now())
	if errors.Is(err, store.ErrNotFound) {
		return ErrNotStored
	}
	return err
}

// Quote finds the message a reply answers by its platform id (Quoter); a
// recalled one is named so, its text left out.
func (h StoreHistory) Quote(channel, externalID string) (Quote, bool) {
	m, err := h.Store.ByExternal(channel, externalID)
	if err != nil {
		return Quote{}, false
	}
	q := Quote{User: m.User, Time: m.Time.Local(), Text: m.Text}
	if m.IsRecalled() {
		q.Text = "(a recalled message)"
	}
	return q, true
}

// Edit replaces a stored message's text by its platform id (Editor).
func (h StoreHistory) Edit(_ context.Context, channel, externalID, text string, at time.Time) (string, error) {
	m, err := h.Store.EditExternal(channel, externalID, text, 0, at)
	if errors.Is(err, store.ErrNotFound) {
		return "", ErrNotStored
	}
	if err != nil {
		return "", err
	}
	return m.ID, nil
}

// RecallOwn marks one of the agent's stored messages recalled by its
// stored id (OwnRecaller) and returns its text.
func (h StoreHistory) RecallOwn(_ context.Context, channel, storedID string) (string, error) {
	now := time.Now
	if h.Now != nil {
		now = h.Now
	}
	m, err := h.Store.MarkRecalledID(channel, storedID, now())
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalid) {
		return "", ErrNotStored
	}
	if err != nil {
		return "", err
	}
	return m.Text, nil
}

// keptScan bounds how many of a chat's newest messages Kept reads for the
// newest one with a platform id.
const keptScan = 200

// Kept implements Kept: the bridge's chats (channels "<bridge>:…") whose
// newest message with a platform id — one someone said, which the bridge
// stored — was said since since.
func (h StoreHistory) Kept(bridge string, since time.Time) ([]ChatMark, error) {
	chans, err := h.Store.Channels()
	if err != nil {
		return nil, err
	}
	var out []ChatMark
	for _, c := range chans {
		if _, ok := ParseChannel(bridge, c.Name); !ok {
			continue
		}
		msgs, err := h.Store.Recent(c.Name, store.Window{Limit: 1, MaxScan: keptScan,
			Keep: func(m *store.Message) bool { return m.ExternalID != "" && m.Role == store.RoleUser }})
		if err != nil {
			return nil, err
		}
		if len(msgs) == 0 || msgs[0].Time.Before(since) {
			continue
		}
		out = append(out, ChatMark{Channel: c.Name, ExternalID: msgs[0].ExternalID, Time: msgs[0].Time})
	}
	return out, nil
}
