package llm

import (
	"regexp"
	"strconv"
	"strings"
)

// What local servers say when a request does not fit or asks for what the
// model lacks. The wordings are the servers' own:
//
//   - Ollama (server/images.go, server/routes.go): `<model> does not
//     support tools`, `"<model>" does not support thinking`;
//   - vLLM (entrypoints/openai/chat_completion/serving.py): `"auto" tool
//     choice requires --enable-auto-tool-choice and --tool-call-parser to
//     be set`, `This model's maximum context length is N tokens. However,
//     you requested M tokens (…)`;
//   - llama.cpp (tools/server/server-context.cpp): type
//     exceed_context_size_error, `request (N tokens) exceeds the available
//     context size (M tokens), try increasing it`;
//   - OpenAI: code context_length_exceeded; Anthropic: `prompt is too
//     long: N tokens > M maximum`.
var (
	reLlamaCtx     = regexp.MustCompile(`request \((\d+) tokens\) exceeds the available context size \((\d+) tokens\)`)
	reVLLMCtx      = regexp.MustCompile(`maximum context length is (\d+) tokens.*?(?:requested|resulted in|contains at least|has) (\d+)`)
	reAnthropicCtx = regexp.MustCompile(`prompt is too long: (\d+) tokens > (\d+) maximum`)
)

// refine turns a rejected request into ContextLength or Unsupported when
// the server's words say so, and notes the numbers and the server.
func refine(e *Error, ae apiError) {
	if e.Kind != BadRequest && e.Kind != Server {
		return
	}
	msg := strings.ToLower(ae.Message)
	typ, code := strings.ToLower(ae.Type), strings.ToLower(ae.Code)
	switch {
	case typ == "exceed_context_size_error" || strings.Contains(msg, "exceeds the available context size"):
		e.Kind, e.Server = ContextLength, "llama.cpp"
		if m := reLlamaCtx.FindStringSubmatch(msg); m != nil {
			e.PromptTokens, e.Window = atoi(m[1]), atoi(m[2])
		}
	case strings.Contains(msg, "maximum context length is"):
		e.Kind = ContextLength
		if strings.Contains(msg, "please reduce the length") {
			e.Server = "vllm"
		}
		if m := reVLLMCtx.FindStringSubmatch(msg); m != nil {
			e.Window, e.PromptTokens = atoi(m[1]), atoi(m[2])
		}
	case code == "context_length_exceeded" || strings.Contains(msg, "context length exceeded") || strings.Contains(msg, "context window"):
		e.Kind = ContextLength
	case strings.Contains(msg, "prompt is too long"):
		e.Kind = ContextLength
		if m := reAnthropicCtx.FindStringSubmatch(msg); m != nil {
			e.PromptTokens, e.Window = atoi(m[1]), atoi(m[2])
		}
	case strings.Contains(msg, "does not support tools"):
		e.Kind, e.Feature, e.Server = Unsupported, "tools", "ollama"
	case strings.Contains(msg, "enable-auto-tool-choice"):
		e.Kind, e.Feature, e.Server = Unsupported, "tools", "vllm"
	case strings.Contains(msg, "does not support thinking"):
		e.Kind, e.Feature, e.Server = Unsupported, "thinking", "ollama"
	case strings.Contains(msg, "reasoning_effort") || strings.Contains(msg, "chat_template_kwargs") ||
		strings.Contains(msg, "invalid reasoning value"):
		e.Kind, e.Feature = Unsupported, "think_off"
	}
	if e.Server == "" && e.looksLikeOllama() {
		e.Server = "ollama"
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func featureName(f string) string {
	switch f {
	case "tools":
		return "tool calls"
	case "thinking":
		return "thinking"
	case "think_off":
		return "the request to turn thinking off"
	case "json_schema":
		return "JSON-schema output"
	}
	if f == "" {
		return "a feature the request used"
	}
	return f
}

// contextAdvice says how to make the prompt fit: a larger window on the
// server that has this error, or a smaller context budget.
func (e *Error) contextAdvice() string {
	counts := ""
	if e.PromptTokens > 0 && e.Window > 0 {
		counts = "the prompt is " + strconv.Itoa(e.PromptTokens) + " tokens and the window " + strconv.Itoa(e.Window) + "; "
	}
	lower := "lower agent.context_budget (and the section budgets)"
	switch {
	case e.Server == "llama.cpp":
		return counts + "start llama-server with a larger context (-c 16384), or " + lower
	case e.Server == "vllm":
		return counts + "start vLLM with a larger --max-model-len if the model allows it, or " + lower
	case e.Server == "ollama" || e.looksLikeOllama():
		return counts + "raise Ollama's window (OLLAMA_CONTEXT_LENGTH=16384 ollama serve, or PARAMETER num_ctx in a Modelfile), or " + lower
	}
	return counts + lower + ", or choose a model with a larger window"
}

// unsupportedAdvice names the fix of a missing feature on the server that
// reported it.
func (e *Error) unsupportedAdvice() string {
	switch {
	case e.Feature == "tools" && e.Server == "vllm":
		return "start vLLM with --enable-auto-tool-choice --tool-call-parser hermes (the parser for Qwen and Hermes models; vLLM's tool-calling docs name the one for other families)"
	case e.Feature == "tools" && e.Server == "ollama":
		m := e.Model
		if m == "" {
			m = "<model>"
		}
		return "`ollama show " + m + "` lists the model's capabilities; set CYAN_LLM_MODEL (llm.model) to a model whose capabilities include tools, such as qwen3:8b"
	case e.Feature == "tools":
		return "cyan's turns offer tools; set CYAN_LLM_MODEL (llm.model) to a model that calls tools, or enable tool calls on the server"
	case e.Feature == "thinking":
		return "the model cannot think; cyan only asks it not to, so set llm.think_off to none"
	case e.Feature == "think_off":
		return "the server does not take the request to turn thinking off; set llm.think_off to none (or to the form the server takes)"
	}
	return "check CYAN_LLM_MODEL and the server's log"
}
