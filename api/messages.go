package api

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/turn"
)

type postMessageRequest struct {
	Channel string `json:"channel"`
	User    string `json:"user"`
	UserID  string `json:"user_id"`
	// Kind is "private" (default) or "group".
	Kind string `json:"kind"`
	Text string `json:"text"`
	// Stream answers with server-sent events as the reply is produced.
	Stream bool `json:"stream"`
	// MessageID is the client's own id of the message, used as its
	// idempotency key (as the Idempotency-Key header is).
	MessageID string `json:"message_id"`
}

type postMessageResponse struct {
	MessageID string   `json:"message_id"`
	Replies   []string `json:"replies"`
	// Warning is set when a step after the first answer failed: the
	// replies above were delivered, what would have followed was not.
	Warning string `json:"warning,omitempty"`
	// Replayed: the message was sent before with the same idempotency
	// key; nothing new was stored, and these are the replies stored then.
	Replayed bool `json:"replayed,omitempty"`
}

func (s *Server) postMessage(w http.ResponseWriter, r *http.Request) {
	var req postMessageRequest
	if !decodeBody(w, r, &req) {
		return
	}
	in := turn.Incoming{Channel: req.Channel, User: req.User, UserID: req.UserID, Kind: req.Kind, Text: req.Text}
	key, err := idempotencyKey(r, req.MessageID)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	if req.Stream {
		s.streamMessage(w, r, in, key)
		return
	}
	// The turn outlives the client, as a streamed one does: a client that
	// gave up (a timeout, Ctrl-C) finds the answer in the history, or by
	// sending the message again with the same idempotency key.
	s.turns.Add(1)
	defer s.turns.Done()
	ctx, cancel := s.turnContext(r)
	defer cancel()
	res, err := s.o.Agent.TurnOnce(ctx, in, key, turn.Listener{})
	if err != nil {
		s.writeTurnError(w, ctx, err)
		return
	}
	if res.Replayed {
		w.Header().Set(ReplayedHeader, "true")
	}
	writeJSON(w, http.StatusOK, responseOf(res))
}

func responseOf(res *turn.Result) postMessageResponse {
	out := postMessageResponse{MessageID: res.Message.ID, Replies: texts(res.Replies), Replayed: res.Replayed}
	if res.Err != nil {
		out.Warning = "a later step of the turn failed: " + res.Err.Error()
	}
	return out
}

func texts(ms []*store.Message) []string {
	out := make([]string, 0, len(ms))
	for _, m := range ms {
		out = append(out, m.Text)
	}
	return out
}

// streamMessage answers with server-sent events: "message" once the
// incoming message is durable, "delta" and "break" as the model writes,
// "reply" for each durable outgoing message, then "done" (or "error").
func (s *Server) streamMessage(w http.ResponseWriter, r *http.Request, in turn.Incoming, key string) {
	sse, ok := newSSE(w)
	if !ok {
		writeError(w, http.StatusInternalServerError, "internal", "streaming is not supported by this connection")
		return
	}
	// The turn outlives the client: a page reloaded mid-reply finds the
	// answer in the history and on /api/v1/stream. Only the daemon's
	// shutdown stops it.
	s.turns.Add(1)
	defer s.turns.Done()
	ctx, cancel := s.turnContext(r)
	defer cancel()
	send := func(name string, v any) {
		if ctx.Err() == nil && r.Context().Err() == nil {
			_ = sse.event(name, v)
		}
	}
	res, err := s.o.Agent.TurnOnce(ctx, in, key, turn.Listener{
		// The voice follows the turn's live text on the journal, as it
		// does for every turn, streamed to its caller or not.
		Stored: func(m *store.Message) {
			send("message", map[string]string{"message_id": m.ID})
		},
		Stream: func(e turn.StreamEvent) error {
			if e.Break {
				send("break", struct{}{})
				return nil
			}
			if e.Cut != "" {
				send("cut", map[string]string{"reason": e.Cut})
				return nil
			}
			send("delta", map[string]string{"text": e.Text})
			return nil
		},
		Reply: func(m *store.Message) {
			send("reply", map[string]string{"id": m.ID, "text": m.Text})
		},
	})
	if err != nil {
		status, body := s.turnError(ctx, err)
		if !sse.started {
			writeJSON(w, status, body)
			return
		}
		send("error", body)
		return
	}
	send("done", responseOf(res))
}

// turnContext is the context of a streamed turn: not ended by the client
// going away, only by the daemon stopping (Stop).
func (s *Server) turnContext(r *http.Request) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	stop := context.AfterFunc(s.stopping, cancel)
	return ctx, func() { stop(); cancel() }
}

// turnError maps a failed turn to a status and an error body.
func (s *Server) turnError(ctx context.Context, err error) (int, errorBody) {
	var te *turn.TurnError
	var lim *turn.Limited
	body := errorBody{}
	if errors.As(err, &te) && te.Message != nil {
		body.Error.MessageID = te.Message.ID
	}
	if errors.As(err, &lim) && lim.Message != nil {
		body.Error.MessageID = lim.Message.ID
		body.Error.RetryAfter = int(math.Ceil(lim.RetryAfter.Seconds()))
	}
	kept := ""
	if body.Error.MessageID != "" {
		kept = fmt.Sprintf("your message was kept (id %s), but there is no answer: ", body.Error.MessageID)
	}
	set := func(status int, typ, msg string) (int, errorBody) {
		body.Error.Type, body.Error.Message = typ, kept+msg
		return status, body
	}
	switch {
	case lim != nil:
		return set(http.StatusTooManyRequests, "rate_limited", lim.Reason)
	case turn.IsInvalid(err):
		return set(http.StatusBadRequest, "invalid_request", err.Error())
	case errors.Is(err, store.ErrDiskFull):
		return set(http.StatusInsufficientStorage, "disk_full", errMessage(err))
	case errors.Is(err, store.ErrDataDirGone):
		return set(http.StatusServiceUnavailable, "data_dir_gone", errMessage(err))
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		if body.Error.MessageID != "" {
			s.log.Warn("a turn was interrupted before its answer; its message is kept, and a retry with its idempotency key answers it",
				"message_id", body.Error.MessageID)
		}
		return set(http.StatusServiceUnavailable, "unavailable", "the request ended before the answer (the client went away or the daemon is stopping); try again")
	case te != nil && te.Stage == "llm":
		switch llm.KindOf(err) {
		case llm.Unreachable, llm.RateLimited:
			return set(http.StatusServiceUnavailable, "llm_unavailable", te.Err.Error())
		case llm.Timeout:
			return set(http.StatusGatewayTimeout, "llm_timeout", te.Err.Error())
		default:
			return set(http.StatusBadGateway, "llm_error", te.Err.Error())
		}
	case te != nil && te.Stage == "assemble":
		return set(http.StatusInternalServerError, "assemble", te.Err.Error())
	default:
		s.log.Error("turn failed", "err", err)
		return set(http.StatusInternalServerError, "storage", err.Error())
	}
}

func (s *Server) writeTurnError(w http.ResponseWriter, ctx context.Context, err error) {
	status, body := s.turnError(ctx, err)
	if body.Error.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(body.Error.RetryAfter))
	}
	writeJSON(w, status, body)
}

// Message is a message as the API lists it.
type Message struct {
	ID       string    `json:"id"`
	Role     string    `json:"role"`
	User     string    `json:"user"`
	Text     string    `json:"text"`
	Time     time.Time `json:"time"`
	ToolName string    `json:"tool_name,omitempty"`
	Empty    bool      `json:"empty_reply,omitempty"`
	// Proactive marks what the agent said on its own, and the platform
	// line that prompted it.
	Proactive bool `json:"proactive,omitempty"`
	// Incomplete: the model's server cut this answer off; it is the part
	// that was shown.
	Incomplete bool `json:"incomplete,omitempty"`
	// Recalled is when its sender withdrew it on the platform (a QQ
	// recall): it is kept, and left out of every prompt.
	Recalled time.Time `json:"recalled,omitzero"`
}

// List limits of GET /api/v1/messages.
const (
	defaultListLimit = 50
	maxListLimit     = 1000
)

// listMessages returns the newest messages of a channel, oldest first: what
// people said and what the agent answered; with all=1 also tool results and
// the agent's silent turns.
func (s *Server) listMessages(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	channel := q.Get("channel")
	if err := store.ValidChannel(channel); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", "channel: "+err.Error())
		return
	}
	limit := defaultListLimit
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxListLimit {
			writeError(w, http.StatusBadRequest, "invalid_request", fmt.Sprintf("limit must be a number from 1 to %d", maxListLimit))
			return
		}
		limit = n
	}
	all := q.Get("all") == "1" || q.Get("all") == "true"
	msgs, err := s.o.Store.Recent(channel, store.Window{Limit: limit, Keep: func(m *store.Message) bool {
		return all || m.Role == store.RoleUser || m.Role == store.RoleSystem || (m.Role == store.RoleAssistant && m.Text != "")
	}})
	if err != nil {
		writeError(w, http.StatusInternalServerError, "storage", err.Error())
		return
	}
	out := make([]Message, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, Message{ID: m.ID, Role: string(m.Role), User: m.User, Text: m.Text, Time: m.Time, ToolName: m.ToolName, Empty: m.Empty, Proactive: m.Proactive, Recalled: m.Recalled, Incomplete: m.Incomplete})
	}
	writeJSON(w, http.StatusOK, MessageList{Messages: out})
}

func (s *Server) lastTrace(w http.ResponseWriter, r *http.Request) {
	channel := r.URL.Query().Get("channel")
	if err := store.ValidChannel(channel); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", "channel: "+err.Error())
		return
	}
	t, err := s.o.Agent.LastTrace(channel)
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("no turn has run in channel %q yet", channel))
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, "storage", err.Error())
		return
	}
	writeJSON(w, http.StatusOK, t)
}
