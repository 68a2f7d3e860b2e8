package bridge

import (
	"context"
	"fmt"
	"sync"
	"time"
	"unicode/utf8"
)

// DefaultMediaBudget is how long one incoming message may wait for its
// media (all of its images fetched at once) before it is stored with what
// arrived, the rest named as not downloaded.
const DefaultMediaBudget = 10 * time.Second

// MaxInboundBytes is the longest incoming text stored (the companion's
// limit on one message, turn.MaxTextBytes): a longer message is cut, with
// a note saying so, never refused.
const MaxInboundBytes = 256 << 10

// accept takes an incoming message from the adapter. A message with media
// to download, from a platform that pushes without waiting for an
// acknowledgement (Pusher), is handled in a goroutine of its own: its
// downloads never hold up the events after it, in its chat or any other;
// a turn in its chat waits for it (at most the budget), so the model sees
// the picture it is asked about. Everything else is handled before accept
// returns.
func (b *Bridge) accept(ctx context.Context, m *Message) {
	p, push := b.adapter.(Pusher)
	if m == nil || !hasMedia(m) || !push || !p.PushesWithoutAck() {
		b.inbound(ctx, m)
		return
	}
	release := b.media.hold(m.Chat)
	b.goSafe("incoming media", func() {
		defer release()
		b.inbound(ctx, m)
	})
}

// hasMedia reports whether a message has an image to download.
func hasMedia(m *Message) bool {
	for _, p := range m.Parts {
		if p.Kind == PartImage && p.Media != nil && p.Media.Fetch != nil {
			return true
		}
	}
	return false
}

// fetchImages downloads a message's images, all at once, for at most the
// budget: each part index maps to its kept reference or to why it was not
// kept. Each download runs in a goroutine Run joins, bounded by the
// budget's context; one that overstays is named as not downloaded.
func (b *Bridge) fetchImages(ctx context.Context, m *Message) map[int]string {
	out := map[int]string{}
	type result struct {
		i   int
		ref string
	}
	ctx, cancel := context.WithTimeout(ctx, b.budget)
	defer cancel()
	results := make(chan result, len(m.Parts))
	n := 0
	for i, p := range m.Parts {
		if p.Kind != PartImage {
			continue
		}
		n++
		b.goSafe("image download", func() {
			ref := "not downloaded"
			defer func() { results <- result{i, ref} }()
			ref = b.images.keep(ctx, m.Chat, p.Media)
		})
	}
	timeout := b.clock.After(b.budget + time.Second)
	for n > 0 {
		select {
		case r := <-results:
			out[r.i] = r.ref
			if (r.ref == "not fetched" || r.ref == "not downloaded") && ctx.Err() != nil {
				out[r.i] = b.notInTime()
			}
			n--
		case <-timeout:
			for i, p := range m.Parts {
				if _, done := out[i]; p.Kind == PartImage && !done {
					out[i] = b.notInTime()
				}
			}
			return out
		}
	}
	return out
}

func (b *Bridge) notInTime() string {
	return fmt.Sprintf("not downloaded: still loading after %s", b.budget.Round(time.Second))
}

// cutInbound keeps an incoming text within MaxInboundBytes, cut at a rune
// boundary with a note of what was left out.
func cutInbound(text string) string {
	if len(text) <= MaxInboundBytes {
		return text
	}
	cut := MaxInboundBytes - 200
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut] + fmt.Sprintf("\n[… cut: the message was %d bytes; only the first %d are kept]", len(text), cut)
}

// quoteReplies fills in the message a reply part answers, when the
// platform sent only its id (OneBot's reply segment): who said it, when,
// and its text, from the store.
func (b *Bridge) quoteReplies(m *Message, channel string) {
	q, ok := b.agent.(Quoter)
	for i, p := range m.Parts {
		if p.Kind != PartReply || p.MessageID == "" || p.ReplyText != "" || p.ToSelf {
			continue
		}
		if b.ownMessage(m.Chat, p.MessageID) {
			m.Parts[i].ToSelf = true // one of the bot's own: "[reply to ^<its name>]"
			continue
		}
		if !ok {
			continue
		}
		if got, found := q.Quote(channel, p.MessageID); found {
			m.Parts[i].ReplyFrom, m.Parts[i].ReplyText, m.Parts[i].ReplyTime = got.User, got.Text, got.Time
		}
	}
}

// mediaHolds counts, per chat, the incoming messages still waiting for
// their media, so a turn there can wait for them.
type mediaHolds struct {
	mu   sync.Mutex
	n    map[Chat]int
	done map[Chat]chan struct{}
}

// hold notes one more message of c waiting; the func releases it.
func (h *mediaHolds) hold(c Chat) func() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n == nil {
		h.n, h.done = map[Chat]int{}, map[Chat]chan struct{}{}
	}
	if h.n[c] == 0 {
		h.done[c] = make(chan struct{})
	}
	h.n[c]++
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			if h.n[c]--; h.n[c] == 0 {
				close(h.done[c])
				delete(h.n, c)
				delete(h.done, c)
			}
		})
	}
}

// waiting returns a channel closed when c has no message waiting for its
// media, or nil when it has none now.
func (h *mediaHolds) waiting(c Chat) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.done[c]
}
