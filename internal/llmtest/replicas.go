package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/llm"
)

// Flavor makes a Server answer as one real server does where servers
// differ: their windows, their refusals and their error texts.
type Flavor string

// The flavors. The zero value is a plain OpenAI-compatible server.
const (
	// Ollama copies ollama/ollama at fb30760996871fa9460115c753afd2c60d4ab0f7:
	// /api/show (server/routes.go ShowHandler: model_info with
	// "<arch>.context_length", capabilities), /api/ps (context_length of a
	// loaded model), the chat prompt cut to num_ctx by dropping the oldest
	// messages without a word (server/prompt.go chatPrompt), "<model> does
	// not support tools" as a 400 (server/images.go CheckCapabilities,
	// server/routes.go handleScheduleError, openai/openai.go NewError) and
	// reasoning_effort "none" as think false (openai/openai.go
	// thinkFromReasoningEffort).
	Ollama Flavor = "ollama"
	// VLLM copies vllm-project/vllm at 5e918640d7b65820db5beaa98c2a99925bff7c17
	// (vllm/entrypoints/openai/chat_completion/serving.py): the 400
	// `"auto" tool choice requires --enable-auto-tool-choice and
	// --tool-call-parser to be set` for a request with tools to a server
	// started without them, the 400 "This model's maximum context length is
	// N tokens. However, you requested …" when prompt and max_tokens exceed
	// max_model_len, max_model_len in /v1/models
	// (vllm/entrypoints/openai/models/serving.py at
	// 4fe4500477d5bbf2c2a467adacc60f7d215cd655), and chat_template_kwargs
	// passed to the template.
	VLLM Flavor = "vllm"
	// LlamaCpp copies ggml-org/llama.cpp at fb4026604c67c682f552337ec9b91eced0abd35a
	// (tools/server/server-context.cpp): the 400 exceed_context_size_error
	// "request (N tokens) exceeds the available context size (M tokens), try
	// increasing it" with n_prompt_tokens and n_ctx, /props with
	// default_generation_settings.n_ctx, /v1/models with meta.n_ctx_train;
	// a tool call the template's parser does not recognise is passed on as
	// content (common/chat.cpp), which a Reply's Text stands for.
	LlamaCpp Flavor = "llama.cpp"
)

// replicaRequest is the part of a chat request only the replicas read.
type replicaRequest struct {
	ReasoningEffort    *string        `json:"reasoning_effort"`
	ChatTemplateKwargs map[string]any `json:"chat_template_kwargs"`
	ToolChoice         any            `json:"tool_choice"`
	Think              *bool          `json:"think"`
}

// CountTokens is the replicas' tokenizer: a token per four bytes of each
// message and of the tools' JSON (which the server renders into the
// prompt), and four for each message's framing.
func CountTokens(req Request) int {
	n := 0
	for _, m := range req.Messages {
		n += 4 + (len(m.Content)+3)/4
		for _, tc := range m.ToolCalls {
			n += (len(tc.Name) + len(tc.Arguments) + 3) / 4
		}
	}
	if len(req.Tools) > 0 {
		b, _ := json.Marshal(req.Tools)
		n += (len(b) + 3) / 4
	}
	return n
}

// replica answers what the flavor answers before a chat reply: an error
// the real server sends (true: the request is answered), or the prompt cut
// to the window (Ollama). It fills req's replica fields.
func (s *Server) replica(w http.ResponseWriter, req *Request) bool {
	var rr replicaRequest
	_ = json.Unmarshal(req.Body, &rr)
	if rr.ReasoningEffort != nil {
		req.ReasoningEffort = *rr.ReasoningEffort
	}
	req.ChatTemplateKwargs = rr.ChatTemplateKwargs
	s.mu.Lock()
	flavor, window, noTools, reject := s.Flavor, s.Window, s.NoTools, s.RejectFields
	s.mu.Unlock()
	for _, f := range reject {
		if strings.Contains(string(req.Body), `"`+f+`"`) {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{
				"message": "Unrecognized request argument supplied: " + f, "type": "invalid_request_error", "param": nil, "code": nil}})
			return true
		}
	}
	req.PromptTokens = CountTokens(*req)
	switch flavor {
	case Ollama:
		if rr.ReasoningEffort != nil {
			switch *rr.ReasoningEffort {
			case "none", "minimal", "low", "medium", "high", "max", "xhigh", "ultra":
			default:
				ollamaError(w, http.StatusBadRequest, fmt.Sprintf("invalid reasoning value: %q (must be \"minimal\", \"low\", \"medium\", \"high\", \"xhigh\", \"ultra\", \"max\", or \"none\")", *rr.ReasoningEffort))
				return true
			}
		}
		if noTools && len(req.Tools) > 0 {
			ollamaError(w, http.StatusBadRequest, "registry.ollama.ai/library/"+req.Model+" does not support tools")
			return true
		}
		if window > 0 {
			for req.PromptTokens > window && len(req.Messages) > 1 {
				i := 0
				for i < len(req.Messages)-1 && req.Messages[i].Role == llm.RoleSystem {
					i++
				}
				if i >= len(req.Messages)-1 {
					break
				}
				req.Messages = append(req.Messages[:i:i], req.Messages[i+1:]...)
				req.Truncated++
				req.PromptTokens = CountTokens(*req)
			}
		}
	case VLLM:
		if noTools && len(req.Tools) > 0 && rr.ToolChoice != "none" {
			vllmError(w, `"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set`)
			return true
		}
		if window > 0 && req.PromptTokens+req.MaxTokens > window {
			vllmError(w, fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.",
				window, req.PromptTokens+req.MaxTokens, req.PromptTokens, req.MaxTokens))
			return true
		}
	case LlamaCpp:
		if window > 0 && req.PromptTokens > window {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{
				"code":            400,
				"message":         fmt.Sprintf("request (%d tokens) exceeds the available context size (%d tokens), try increasing it", req.PromptTokens, window),
				"type":            "exceed_context_size_error",
				"n_prompt_tokens": req.PromptTokens,
				"n_ctx":           window,
			}})
			return true
		}
	}
	return false
}

// thinking reports whether a thinking model thinks on this request: it
// does unless the request turned thinking off in the flavor's own way.
func (req Request) thinking() bool {
	if req.ReasoningEffort == "none" {
		return false
	}
	if v, ok := req.ChatTemplateKwargs["enable_thinking"].(bool); ok && !v {
		return false
	}
	return true
}

func ollamaError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "param": nil, "code": nil}})
}

func vllmError(w http.ResponseWriter, msg string) {
	writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"message": msg, "type": "BadRequestError", "param": nil, "code": 400}})
}

// serveReplica answers the flavor's own routes; false: not one of them.
func (s *Server) serveReplica(w http.ResponseWriter, r *http.Request, path string, body []byte) bool {
	s.mu.Lock()
	flavor, window, modelMax, loaded, noTools, thinks := s.Flavor, s.Window, s.ModelMax, s.Loaded, s.NoTools, s.Thinks
	models := s.Models
	s.mu.Unlock()
	if models == nil {
		models = []string{"fake-model"}
	}
	known := func(m string) bool {
		for _, x := range models {
			if strings.TrimSuffix(x, ":latest") == strings.TrimSuffix(m, ":latest") {
				return true
			}
		}
		return false
	}
	switch {
	case flavor == Ollama && path == "/api/show" && r.Method == http.MethodPost:
		var q struct {
			Model string `json:"model"`
			Name  string `json:"name"`
		}
		_ = json.Unmarshal(body, &q)
		if q.Model == "" {
			q.Model = q.Name
		}
		if !known(q.Model) {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("model '%s' not found", q.Model)})
			return true
		}
		caps := []string{"completion"}
		if !noTools {
			caps = append(caps, "tools")
		}
		if thinks {
			caps = append(caps, "thinking")
		}
		info := map[string]any{"general.architecture": "qwen3", "general.basename": q.Model}
		if modelMax > 0 {
			info["qwen3.context_length"] = modelMax
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"modelfile": "FROM " + q.Model, "parameters": "", "template": "{{ .Prompt }}",
			"details":      map[string]any{"format": "gguf", "family": "qwen3", "parameter_size": "8.2B", "quantization_level": "Q4_K_M"},
			"model_info":   info,
			"capabilities": caps,
			"modified_at":  time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
		})
		return true
	case flavor == Ollama && path == "/api/ps" && r.Method == http.MethodGet:
		list := []map[string]any{}
		if loaded {
			for _, m := range models {
				list = append(list, map[string]any{"name": m, "model": m, "size": 6 << 30, "context_length": window,
					"expires_at": time.Date(2026, 11, 1, 0, 5, 0, 0, time.UTC), "size_vram": 6 << 30})
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{"models": list})
		return true
	case flavor == LlamaCpp && path == "/props" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, map[string]any{"default_generation_settings": map[string]any{"n_ctx": window},
			"total_slots": 1, "model_path": "/models/" + models[0] + ".gguf"})
		return true
	case (flavor == VLLM || flavor == LlamaCpp) && strings.HasSuffix(path, "/models") && r.Method == http.MethodGet:
		var data []map[string]any
		for _, m := range models {
			e := map[string]any{"id": m, "object": "model", "created": 1700000000, "owned_by": string(flavor)}
			if flavor == VLLM {
				e["owned_by"], e["max_model_len"], e["root"] = "vllm", window, m
			} else {
				e["owned_by"], e["meta"] = "llamacpp", map[string]any{"n_ctx_train": modelMax, "vocab_type": 2}
			}
			data = append(data, e)
		}
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
		return true
	}
	return false
}

// keepAlive holds a stream open with SSE comment lines, as DeepSeek's API
// does while a request waits (": keep-alive", its documented behaviour),
// until the client leaves.
func keepAlive(w http.ResponseWriter, r *http.Request, every time.Duration) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	for {
		if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
			return
		}
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		if !wait(r.Context(), every) {
			return
		}
	}
}
