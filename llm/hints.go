package llm

// Ignored lists, in words, the hints of req that c's provider drops or
// changes on the way out: a think hint an OpenAI-compatible server has no
// form for, a temperature Anthropic refuses while thinking, a JSON-schema
// output Anthropic can only be asked for in the prompt. Callers show them
// as warnings (generate does in debug mode). It returns nil for a Client
// this package did not make.
func Ignored(c Client, req Request) []string {
	if cl, ok := baseClient(c); ok {
		return cl.p.ignored(req)
	}
	return nil
}

func (o *openAI) ignored(req Request) []string {
	if req.Think == ThinkOff && o.c.thinkOffNow() == thinkNone {
		return []string{"think: false is not sent to this server (llm.think_off is none, or the server refused it lately); the model's own default applies"}
	}
	return nil
}

func (a *anthropic) ignored(req Request) []string {
	var out []string
	if req.ResponseFormat != nil {
		out = append(out, "anthropic has no JSON-schema output mode; the shape is asked for in the system prompt")
	}
	if thinkingBudget(req.Think) > 0 {
		switch {
		case midToolLoop(req.Messages):
			out = append(out, "thinking is left off in the middle of a tool loop")
		case req.Temperature != nil:
			out = append(out, "temperature is dropped: anthropic does not allow it while thinking")
		}
	}
	return out
}
