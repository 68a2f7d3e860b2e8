package api

import (
	"context"
	"net/http"
	"time"

	"github.com/cyan-agent/cyan/llm"
)

// llmCheckTimeout bounds POST /api/v1/llm/check.
const llmCheckTimeout = 30 * time.Second

// llmCheck answers POST /api/v1/llm/check: the daemon's own model client
// lists its models and answers one word (llm.Check), so `cyan doctor`
// checks the model the daemon uses, not the shell's settings.
func (s *Server) llmCheck(w http.ResponseWriter, r *http.Request) {
	if s.o.LLM == nil {
		writeError(w, http.StatusNotFound, "not_found", "this daemon has no model client to check")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), llmCheckTimeout)
	defer cancel()
	res := llm.Check(ctx, s.o.LLM, s.o.LLMModel)
	if s.o.PromptSize != nil {
		res.PromptTokens, res.PromptParts = s.o.PromptSize(ctx)
	}
	writeJSON(w, http.StatusOK, res)
}
