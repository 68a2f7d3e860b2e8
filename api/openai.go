package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/turn"
)

// The OpenAI-compatible surface lets front-ends such as SillyTavern or Open
// WebUI talk to the companion as if it were a model. The companion keeps its
// own memory and persona, so of a request only the last user message is
// used: it is the incoming message, spoken by the request's "user" field (or
// "user"), in the channel named by the X-Cyan-Channel header (or "openai").
// The front-end's own system prompt and history are ignored.

// ChannelHeader picks the channel of an OpenAI-compatible request.
const ChannelHeader = "X-Cyan-Channel"

// modelID is the one model the endpoint lists: the companion itself.
const modelID = "cyan"

func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list",
		"data": []map[string]any{{
			"id": modelID, "object": "model", "created": 0, "owned_by": "cyan",
			"description": "the companion " + s.o.Agent.AgentName() + ", with its memory",
		}},
	})
}

type chatRequest struct {
	Model    string        `json:"model"`
	Messages []chatMessage `json:"messages"`
	Stream   bool          `json:"stream"`
	User     string        `json:"user"`
}

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// text reads a message's content: a string, or an array of parts of which
// the text parts are joined.
func (m chatMessage) text() (string, error) {
	if len(m.Content) == 0 || string(m.Content) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(m.Content, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(m.Content, &parts); err != nil {
		return "", fmt.Errorf("content must be a string or an array of parts")
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
}

func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if !decodeBody(w, r, &req) {
		return
	}
	var last *chatMessage
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			last = &req.Messages[i]
			break
		}
	}
	if last == nil {
		writeError(w, http.StatusBadRequest, "invalid_request", "messages has no user message; the last user message is what the companion answers")
		return
	}
	text, err := last.text()
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", "the last user message: "+err.Error())
		return
	}
	channel := r.Header.Get(ChannelHeader)
	if channel == "" {
		channel = "openai"
	}
	user := req.User
	if user == "" {
		user = "user"
	}
	model := req.Model
	if model == "" {
		model = modelID
	}
	// The front-end shows the character's greeting itself.
	in := turn.Incoming{Channel: channel, User: user, Text: text, NoGreeting: true}
	key, err := idempotencyKey(r, "")
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	// The turn outlives its client, as on /api/v1/messages.
	s.turns.Add(1)
	defer s.turns.Done()
	ctx, cancel := s.turnContext(r)
	defer cancel()
	if req.Stream {
		s.streamCompletion(ctx, w, r, in, key, model)
		return
	}
	res, err := s.o.Agent.TurnOnce(ctx, in, key, turn.Listener{})
	if err != nil {
		s.writeTurnError(w, ctx, err)
		return
	}
	usage := usageOf(res)
	writeJSON(w, http.StatusOK, map[string]any{
		"id":      "chatcmpl-" + res.Message.ID,
		"object":  "chat.completion",
		"created": res.Message.Time.Unix(),
		"model":   model,
		"choices": []map[string]any{{
			"index":         0,
			"message":       map[string]any{"role": "assistant", "content": joinReplies(res.Replies)},
			"finish_reason": "stop",
		}},
		"usage": usage,
	})
}

// joinReplies shows the "@br" parts of an answer as paragraphs of one
// message, the way a single-message front-end can show them.
func joinReplies(ms []*store.Message) string {
	return strings.Join(texts(ms), "\n\n")
}

func usageOf(res *turn.Result) map[string]int {
	in, out := 0, 0
	if res.Trace != nil {
		for _, st := range res.Trace.Steps {
			in += st.Usage.InputTokens
			out += st.Usage.OutputTokens
		}
	}
	return map[string]int{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out}
}

// streamCompletion streams chat.completion.chunk events ending in
// "data: [DONE]". A failure before the first chunk is a plain JSON error.
func (s *Server) streamCompletion(ctx context.Context, w http.ResponseWriter, r *http.Request, in turn.Incoming, key, model string) {
	sse, _ := newSSE(w)
	var id string
	var created int64
	chunk := func(delta map[string]any, finish any) error {
		if r.Context().Err() != nil { // the client left; the turn goes on
			return nil
		}
		return sse.event("", map[string]any{
			"id": "chatcmpl-" + id, "object": "chat.completion.chunk", "created": created, "model": model,
			"choices": []map[string]any{{"index": 0, "delta": delta, "finish_reason": finish}},
		})
	}
	began, streamed, cut := false, false, ""
	_, err := s.o.Agent.TurnOnce(ctx, in, key, turn.Listener{
		Stored: func(m *store.Message) { id, created = m.ID, m.Time.Unix() },
		// A retry answered from the first answer streams nothing: its
		// replies come whole.
		Reply: func(m *store.Message) {
			if streamed {
				return
			}
			if !began {
				began = true
				_ = chunk(map[string]any{"role": "assistant", "content": ""}, nil)
			} else {
				_ = chunk(map[string]any{"content": "\n\n"}, nil)
			}
			_ = chunk(map[string]any{"content": m.Text}, nil)
		},
		Stream: func(e turn.StreamEvent) error {
			streamed = true
			if !began {
				began = true
				_ = chunk(map[string]any{"role": "assistant", "content": ""}, nil)
			}
			text := e.Text
			if e.Break {
				text = "\n\n"
			}
			if e.Cut != "" {
				cut = e.Cut // the answer ends "length"-less: finish_reason "cut" below
				return nil
			}
			_ = chunk(map[string]any{"content": text}, nil)
			return nil
		},
	})
	if err != nil {
		status, body := s.turnError(ctx, err)
		if !sse.started {
			writeJSON(w, status, body)
			return
		}
		_ = sse.event("", body)
		_ = sse.raw("", "[DONE]")
		return
	}
	if !began {
		_ = chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	}
	if cut != "" {
		// The model's server stopped mid-answer: what was sent is all
		// there is, and the client is told so rather than "stop".
		_ = chunk(map[string]any{}, "error")
		_ = sse.raw("", "[DONE]")
		return
	}
	_ = chunk(map[string]any{}, "stop")
	_ = sse.raw("", "[DONE]")
}
