package api

import (
	"net/http"
	"sync"
	"time"

	"github.com/cyan-agent/cyan/store"
)

// Hub fans every outgoing message out to the listeners of its channel
// (GET /api/v1/stream). A listener too slow to keep up loses messages
// rather than holding the companion back; it is told with a "lagged" event.
type Hub struct {
	mu     sync.Mutex
	subs   map[string]map[*listener]struct{}
	closed bool
}

type listener struct {
	ch     chan streamItem
	lagged bool
}

// streamItem is one event of a stream: a stored message, or another named
// event (speech).
type streamItem struct {
	msg  *store.Message
	name string
	data any
}

// NewHub makes an empty hub.
func NewHub() *Hub { return &Hub{subs: map[string]map[*listener]struct{}{}} }

// Publish hands a stored outgoing message to its channel's listeners.
func (h *Hub) Publish(m *store.Message) { h.send(m.Channel, streamItem{msg: m}) }

// publish hands a named event to a channel's listeners.
func (h *Hub) publish(channel, name string, data any) {
	h.send(channel, streamItem{name: name, data: data})
}

func (h *Hub) send(channel string, it streamItem) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for l := range h.subs[channel] {
		select {
		case l.ch <- it:
		default:
			l.lagged = true
		}
	}
}

// Close ends every stream (the daemon is stopping).
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for _, ls := range h.subs {
		for l := range ls {
			close(l.ch)
		}
	}
	h.subs = map[string]map[*listener]struct{}{}
}

func (h *Hub) subscribe(channel string) (*listener, func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	l := &listener{ch: make(chan streamItem, 64)}
	if h.closed {
		close(l.ch)
		return l, func() {}
	}
	if h.subs[channel] == nil {
		h.subs[channel] = map[*listener]struct{}{}
	}
	h.subs[channel][l] = struct{}{}
	return l, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if _, ok := h.subs[channel][l]; ok {
			delete(h.subs[channel], l)
			close(l.ch)
		}
	}
}

func (h *Hub) takeLag(l *listener) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	lag := l.lagged
	l.lagged = false
	return lag
}

// streamPing is how often an idle stream sends a comment to stay open.
const streamPing = 15 * time.Second

// stream: GET /api/v1/stream?channel=C — server-sent events: "ready" once,
// then a "message" event for every outgoing message of the channel as it
// is stored (answers and proactive messages), and in voiced channels a
// "speech" event for every voiced segment (tts.Speech).
func (s *Server) stream(w http.ResponseWriter, r *http.Request) {
	channel := r.URL.Query().Get("channel")
	if err := store.ValidChannel(channel); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", "channel: "+err.Error())
		return
	}
	l, cancel := s.o.Hub.subscribe(channel)
	defer cancel()
	sse, _ := newSSE(w)
	if err := sse.event("ready", map[string]string{"channel": channel}); err != nil {
		return
	}
	ping := time.NewTicker(streamPing)
	defer ping.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-ping.C:
			if _, err := w.Write([]byte(": ping\n\n")); err != nil {
				return
			}
			_ = sse.rc.Flush()
		case it, ok := <-l.ch:
			if !ok {
				return
			}
			if s.o.Hub.takeLag(l) {
				_ = sse.event("lagged", map[string]string{"message": "some messages were not streamed; GET /api/v1/messages has them all"})
			}
			if it.msg == nil {
				if err := sse.event(it.name, it.data); err != nil {
					return
				}
				continue
			}
			m := it.msg
			if err := sse.event("message", streamJSON{ID: m.ID, Role: string(m.Role), User: m.User, Text: m.Text, Time: m.Time, Proactive: m.Proactive, ReplyTo: m.ReplyTo}); err != nil {
				return
			}
		}
	}
}

type streamJSON struct {
	ID        string    `json:"id"`
	Role      string    `json:"role"`
	User      string    `json:"user"`
	Text      string    `json:"text"`
	Time      time.Time `json:"time"`
	Proactive bool      `json:"proactive,omitempty"`
	// ReplyTo is the message this one answers (a speech event's turn).
	ReplyTo string `json:"reply_to,omitempty"`
}
