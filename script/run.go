package script

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/cyan-agent/cyan/generate"
	"github.com/cyan-agent/cyan/llm"
)

// RunOptions tune one run.
type RunOptions struct {
	// Channel is the conversation the run serves, for the traces.
	Channel string
	// Identity is who the calls speak as (generate's identity layer);
	// zero: the script's system messages alone.
	Identity generate.Identity
	// Debug turns on generate's debug output for every site.
	Debug bool
}

// Result is a finished run.
type Result struct {
	// Value is the last site's value (validated against the script's
	// output when it declares one), in the standard library's JSON types.
	Value any             `json:"value"`
	JSON  json.RawMessage `json:"json"`
	// Vars holds every site's value by name.
	Vars map[string]any `json:"vars"`
	// TraceID is the last site's generate trace; TraceIDs all of them, in
	// order ("" where no ring keeps traces).
	TraceID  string            `json:"trace_id,omitempty"`
	TraceIDs []string          `json:"trace_ids,omitempty"`
	Traces   []*generate.Trace `json:"-"`
	// Messages is the dialogue as it ended, the sites filled in.
	Messages []llm.Message `json:"messages"`
}

// Decode decodes the value into v.
func (r *Result) Decode(v any) error { return json.Unmarshal(r.JSON, v) }

// Run checks the inputs, then walks the messages: each is rendered with
// the inputs and the values of the sites before it, and each site is one
// generate call that answers the user message before it (the earlier
// messages are its history). The first site gets the context items of
// use:; the last free site gets the output shape; a choice site gets its
// options. The error is an *InputError, an *Error (a template that cannot
// render) or a *generate.Error.
func (s *Script) Run(ctx context.Context, g *generate.Generator, in map[string]any, o RunOptions) (*Result, error) {
	if g == nil {
		return nil, errors.New("script: no generator to run with")
	}
	vars, err := s.CheckInputs(in)
	if err != nil {
		return nil, err
	}
	system, err := s.renderSystem(vars)
	if err != nil {
		return nil, err
	}
	res := &Result{Vars: map[string]any{}}
	lastSite := -1
	for i, m := range s.messages {
		if m.site != nil {
			lastSite = i
		}
	}
	var conv []llm.Message
	first := true
	for i, m := range s.messages {
		text, err := m.text.render(vars)
		if err != nil {
			return res, err
		}
		if m.site == nil {
			role := llm.RoleUser
			if m.role == "assistant" {
				role = llm.RoleAssistant
			}
			conv = append(conv, llm.Message{Role: role, Content: strings.TrimRight(text, spaces)})
			continue
		}
		after, err := m.after.render(vars)
		if err != nil {
			return res, err
		}
		req := s.request(o, system, conv)
		req.Site = m.site.name
		if first {
			req.Context = s.contextItems(vars)
			first = false
		}
		switch {
		case m.site.choices != nil:
			req.Shape = mustJSON(map[string]any{"type": "string", "enum": m.site.choices})
		case i == lastSite && s.Output != nil:
			req.Shape = s.Output
		}
		r, err := g.Generate(ctx, req)
		if err != nil {
			return res, err
		}
		res.TraceIDs = append(res.TraceIDs, r.TraceID)
		res.Traces = append(res.Traces, r.Trace)
		res.TraceID = r.TraceID
		vars[m.site.name] = r.Value
		res.Vars[m.site.name] = r.Value
		res.Value, res.JSON = r.Value, r.JSON
		// Keep the instruction as it was sent, context and shape included.
		sent := r.Trace.Messages
		conv[len(conv)-1] = sent[len(sent)-1]
		conv = append(conv, llm.Message{Role: llm.RoleAssistant, Content: strings.TrimRight(text+valueText(r.Value)+after, spaces)})
	}
	if s.output != nil && len(s.messages[lastSite].site.choices) > 0 {
		v, _, err := s.output.Check(res.Value)
		if err != nil {
			return res, &generate.Error{Kind: generate.KindValidation, Name: s.Name, Site: s.messages[lastSite].site.name,
				Attempts: 1, TraceID: res.TraceID, Err: err}
		}
		if res.Value, err = plainValue(v); err == nil {
			res.JSON = mustJSON(res.Value)
		}
	}
	if system != "" || o.Identity != (generate.Identity{}) {
		sent := res.Traces[len(res.Traces)-1].Messages
		if len(sent) > 0 && sent[0].Role == llm.RoleSystem {
			conv = append([]llm.Message{sent[0]}, conv...)
		}
	}
	res.Messages = conv
	return res, nil
}

const spaces = " \t\r\n"

// request is the generate request of a site, before its own parts.
func (s *Script) request(o RunOptions, system string, conv []llm.Message) generate.Request {
	req := generate.Request{
		Name: s.Name, File: s.File, Channel: o.Channel, Identity: o.Identity, System: system,
		Input: conv[len(conv)-1].Content, History: conv[: len(conv)-1 : len(conv)-1],
		Debug: o.Debug,
	}
	g := s.gen
	if g.attempts != nil {
		req.Attempts = *g.attempts
	}
	if g.strict != nil {
		req.Strict = *g.strict
	}
	if g.think != nil {
		req.Think = *g.think
	}
	if g.debug != nil && *g.debug {
		req.Debug = true
	}
	if g.maxOutput != nil {
		req.MaxOutput = *g.maxOutput
	}
	req.Temperature = g.temperature
	return req
}

// contextItems resolves use: against the inputs. Items whose value is
// missing are left out.
func (s *Script) contextItems(vars map[string]any) []generate.ContextItem {
	var out []generate.ContextItem
	for _, u := range s.use {
		v := lookup(vars, u.source)
		if v == nil {
			continue
		}
		label := u.label
		if !u.labelSet {
			label = u.source
		}
		out = append(out, generate.ContextItem{Source: u.source, Label: label, Value: v, Budget: u.budget})
	}
	return out
}

// lookup follows a dotted path through maps.
func lookup(vars map[string]any, path string) any {
	var cur any = vars
	for _, part := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[part]
	}
	return cur
}

// valueText is a site's value as text in the dialogue.
func valueText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return string(mustJSON(v))
}

// renderSystem merges the system messages by ISDK's rules: backgrounds
// joined by line breaks, contents likewise, notes gathered into a list;
// then background, content and "Notes:" with one "* " line per note,
// separated by blank lines.
func (s *Script) renderSystem(vars map[string]any) (string, error) {
	var bg, content, notes []string
	for _, p := range s.system {
		for _, x := range []struct {
			t   *template
			out *[]string
		}{{p.background, &bg}, {p.content, &content}} {
			if x.t == nil {
				continue
			}
			text, err := x.t.render(vars)
			if err != nil {
				return "", err
			}
			if text = strings.TrimSpace(text); text != "" {
				*x.out = append(*x.out, text)
			}
		}
		for _, n := range p.notes {
			text, err := n.render(vars)
			if err != nil {
				return "", err
			}
			if text = strings.TrimSpace(text); text != "" {
				notes = append(notes, text)
			}
		}
	}
	var parts []string
	if len(bg) > 0 {
		parts = append(parts, strings.Join(bg, "\n"))
	}
	if len(content) > 0 {
		parts = append(parts, strings.Join(content, "\n"))
	}
	if len(notes) > 0 {
		parts = append(parts, "Notes:\n* "+strings.Join(notes, "\n* "))
	}
	return strings.Join(parts, "\n\n"), nil
}
