package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/glob"

	"github.com/cyan-agent/cyan/journal"
	"github.com/cyan-agent/cyan/store"
)

// streamPing is how often an idle stream sends a comment to stay open.
const streamPing = 15 * time.Second

// Close ends every stream (the daemon is stopping), so that they do not
// hold the HTTP server's shutdown.
func (s *Server) Close() {
	s.closed.Do(func() { close(s.closing) })
}

// stream: GET /api/v1/stream?channel=C[&since=ID][&live=1] — server-sent
// events from the journal: "ready" once, then a "message" event (with the
// journal id as its SSE id) for every outgoing message of the channel as
// it is stored, answers and proactive ones, and in a voiced channel a
// "speech" event for every voiced segment (tts.Speech), and in a bridge's
// channel a "bridge" event {"name", "state", "error"?} whenever that bridge
// connects, disconnects, stops or fails (journal.State). A client that reconnects with
// the Last-Event-ID header (browsers send it themselves) or ?since=
// gets every message it missed, once, in order, then the new ones; a
// "lagged" event says when some were lost (kept no more). With live=1 the
// reply's text also streams as it is written: "delta" {"message_id",
// "text"} and "break" events, not stored and not resumed.
func (s *Server) stream(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	channel := q.Get("channel")
	if err := store.ValidChannel(channel); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", "channel: "+err.Error())
		return
	}
	j := s.o.Store.Journal()
	after := j.Last()
	for _, v := range []string{r.Header.Get("Last-Event-ID"), q.Get("since")} {
		if v == "" {
			continue
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			writeError(w, http.StatusBadRequest, "invalid_request", fmt.Sprintf("since/Last-Event-ID %q is not an event id (a whole number from an earlier event's id)", v))
			return
		}
		after = n
	}
	kinds := []journal.Kind{journal.MessageOut, journal.VoiceSpeech}
	live := q.Get("live") == "1" || q.Get("live") == "true"
	if live {
		kinds = append(kinds, journal.ReplyDelta)
	}
	// The bridges' state changes have no channel: the filter takes every
	// channel, and streamed picks the channel's events and the state of
	// the bridge the channel belongs to.
	sub := j.Subscribe(after, journal.Filter{Kinds: append(kinds, journal.BridgeState)})
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() {
		select {
		case <-s.closing:
			cancel()
		case <-ctx.Done():
		}
	}()
	sse, _ := newSSE(w)
	if err := sse.event("ready", map[string]any{"channel": channel, "last_event_id": after}); err != nil {
		return
	}
	for {
		wait, stop := context.WithTimeout(ctx, streamPing)
		evs, err := sub.Next(wait)
		stop()
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, context.DeadlineExceeded):
			if _, err := w.Write([]byte(": ping\n\n")); err != nil {
				return
			}
			_ = sse.rc.Flush()
			continue
		case err != nil:
			return // the journal closed
		}
		for _, e := range evs {
			if !streamed(e, channel) {
				continue
			}
			if err := s.streamEvent(sse, e); err != nil {
				return
			}
		}
	}
}

// streamed reports whether the stream of channel shows e: the channel's
// own events, a gap, and the state changes of the bridge whose channel it
// is ("qq" for "qq:group:1").
func streamed(e journal.Event, channel string) bool {
	switch e.Kind {
	case journal.Gap:
		return true
	case journal.BridgeState:
		var st journal.State
		return e.Decode(&st) == nil && st.Name != "" && strings.HasPrefix(channel, st.Name+":")
	}
	return glob.Channel(channel, e.Channel)
}

// streamEvent writes one journal event as the stream shows it.
func (s *Server) streamEvent(sse *sseWriter, e journal.Event) error {
	switch e.Kind {
	case journal.Gap:
		var g journal.GapInfo
		_ = e.Decode(&g)
		return sse.event("lagged", map[string]any{"message": "some events were lost (" + g.Reason + "); GET /api/v1/messages has every message", "after": g.After, "before": g.Before})
	case journal.VoiceSpeech:
		return sse.eventID(strconv.FormatUint(e.ID, 10), "speech", e.Data)
	case journal.BridgeState:
		return sse.eventID(strconv.FormatUint(e.ID, 10), "bridge", e.Data)
	case journal.ReplyDelta:
		var d journal.Delta
		if e.Decode(&d) != nil {
			return nil
		}
		if d.Break {
			return sse.event("break", map[string]string{"message_id": d.MessageID})
		}
		if d.Cut != "" {
			return sse.event("cut", map[string]string{"message_id": d.MessageID, "reason": d.Cut})
		}
		return sse.event("delta", map[string]string{"message_id": d.MessageID, "text": d.Text})
	}
	var m journal.Message
	if e.Decode(&m) != nil || m.Text == "" {
		return nil
	}
	return sse.eventID(strconv.FormatUint(e.ID, 10), "message", StreamMessage{ID: m.ID, Role: m.Role, User: m.User, Text: m.Text, Time: m.Time, Proactive: m.Proactive, ReplyTo: m.ReplyTo, Incomplete: m.Incomplete})
}

// StreamMessage is a "message" event of GET /api/v1/stream.
type StreamMessage struct {
	ID        string    `json:"id"`
	Role      string    `json:"role"`
	User      string    `json:"user"`
	Text      string    `json:"text"`
	Time      time.Time `json:"time"`
	Proactive bool      `json:"proactive,omitempty"`
	ReplyTo   string    `json:"reply_to,omitempty"`
	// Incomplete: the model's server cut the answer off; this is the part
	// that was shown.
	Incomplete bool `json:"incomplete,omitempty"`
}
