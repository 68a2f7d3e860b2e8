package events

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Scripts runs prompt scripts: Call runs the script called name with the
// step's structured inputs and decodes its validated value into out;
// channel names the conversation in the traces. The daemon passes the
// script library (script.Library.Call).
type Scripts interface {
	Call(ctx context.Context, name, channel string, in map[string]any, out any) error
}

// The prompt scripts of the writer's steps (built in; a persona's
// scripts/ folder may override each). Their names are also the names of
// the JSON-schema response formats their calls ask for.
const (
	ScriptTitle   = "event_title"
	ScriptSummary = "event_summary"
	ScriptExtract = "event_extraction"
)

// ScriptWriter is the Writer that runs the log's steps as prompt scripts.
// Go hands each script structured inputs — the chat log rendered within
// LogChars, earlier records, children, known objects and lines — and reads
// the validated answer with the parsers of parse.go, which keep their
// tolerance and bounds (importance scaled into 0–1, strings and lists
// bounded, unusable items dropped).
type ScriptWriter struct {
	Scripts Scripts
	// LogChars bounds the chat log sent in one call; the middle of a longer
	// topic is left out (and said to be). 0: 12000.
	LogChars int
}

// NewScriptWriter makes a writer that runs scripts with s.
func NewScriptWriter(s Scripts) *ScriptWriter { return &ScriptWriter{Scripts: s, LogChars: 12000} }

var _ Writer = (*ScriptWriter)(nil)

// agentInput is the agent's name as a script input; nil (the script's
// default) when it is not known.
func agentInput(name string) any {
	if strings.TrimSpace(name) == "" {
		return nil
	}
	return name
}

// orNil keeps an empty list out of a script's context.
func orNil[T any](xs []T) any {
	if len(xs) == 0 {
		return nil
	}
	return xs
}

// earlierRecord is an earlier record as event_title reads it.
type earlierRecord struct {
	ID    string `json:"id"`
	Label string `json:"label"`
	Title string `json:"title"`
}

// TitleTopic implements Writer. A title the agent gave is kept whatever
// the script answers.
func (w *ScriptWriter) TitleTopic(ctx context.Context, in TopicInput) (TopicTitle, error) {
	earlier := make([]earlierRecord, 0, len(in.Earlier))
	for _, e := range in.Earlier {
		earlier = append(earlier, earlierRecord(e))
	}
	args := map[string]any{"conversation": w.log(in.Lines, in.Omitted), "agent_name": agentInput(in.Agent),
		"title": in.Title, "earlier": orNil(earlier)}
	content, err := w.call(ctx, ScriptTitle, in.Channel, args)
	if err != nil {
		return TopicTitle{}, err
	}
	out, err := parseTopicTitle(content)
	if err != nil {
		return TopicTitle{}, fmt.Errorf("events: title answer: %w", err)
	}
	if in.Title != "" {
		out.Title = in.Title
	}
	return out, nil
}

// childRecord is a child record as event_summary reads it.
type childRecord struct {
	Label      string  `json:"label"`
	Title      string  `json:"title"`
	Importance float64 `json:"importance"`
}

// Summarize implements Writer.
func (w *ScriptWriter) Summarize(ctx context.Context, in RollupInput) (Summary, error) {
	children := make([]childRecord, 0, len(in.Children))
	for _, c := range in.Children {
		children = append(children, childRecord(c))
	}
	args := map[string]any{"level": string(in.Level), "label": in.Label, "children": children, "agent_name": agentInput(in.Agent)}
	content, err := w.call(ctx, ScriptSummary, in.Channel, args)
	if err != nil {
		return Summary{}, err
	}
	out, err := parseSummary(content)
	if err != nil {
		return Summary{}, fmt.Errorf("events: summary answer: %w", err)
	}
	return out, nil
}

// knownObject and knownLine are what event_extraction reads of the
// objects and lines already known.
type knownObject struct {
	Name   string   `json:"name"`
	Kind   string   `json:"kind"`
	Blocks []string `json:"blocks,omitempty"`
}

type knownLine struct {
	ID   string `json:"id"`
	A    string `json:"a"`
	B    string `json:"b"`
	Text string `json:"text"`
}

// Extract implements Writer.
func (w *ScriptWriter) Extract(ctx context.Context, in ExtractInput) (Extraction, error) {
	objects := make([]knownObject, 0, len(in.Objects))
	for _, o := range in.Objects {
		objects = append(objects, knownObject(o))
	}
	lines := make([]knownLine, 0, len(in.Known))
	for _, k := range in.Known {
		lines = append(lines, knownLine(k))
	}
	args := map[string]any{"conversation": w.log(in.Lines, in.Omitted), "title": in.Title, "agent_name": agentInput(in.Agent),
		"objects": orNil(objects), "known_lines": orNil(lines)}
	content, err := w.call(ctx, ScriptExtract, in.Channel, args)
	if err != nil {
		return Extraction{}, err
	}
	out, err := parseExtraction(content)
	if err != nil {
		return Extraction{}, fmt.Errorf("events: extraction answer: %w", err)
	}
	return out, nil
}

// call runs a script and returns its value as JSON text, for the parsers.
func (w *ScriptWriter) call(ctx context.Context, name, channel string, args map[string]any) (string, error) {
	if w.Scripts == nil {
		return "", fmt.Errorf("events: %s: no prompt scripts to run", name)
	}
	var raw json.RawMessage
	if err := w.Scripts.Call(ctx, name, channel, args, &raw); err != nil {
		return "", fmt.Errorf("events: %s: %w", name, err)
	}
	return string(raw), nil
}

// log renders a chat log within LogChars, leaving out the middle of a
// long one (its start says what the topic was, its end how it came out).
func (w *ScriptWriter) log(lines []LogLine, omitted int) string {
	var b strings.Builder
	w.writeLog(&b, lines, omitted)
	return strings.TrimRight(b.String(), "\n")
}

// writeLog writes a chat log within LogChars, leaving out the middle of a
// long one (its start says what the topic was, its end how it came out).
func (w *ScriptWriter) writeLog(b *strings.Builder, lines []LogLine, omitted int) {
	limit := w.LogChars
	if limit <= 0 {
		limit = 12000
	}
	rendered := make([]string, len(lines))
	total := 0
	for i, l := range lines {
		text := l.Text
		if utf8.RuneCountInString(text) > 1000 {
			text = string([]rune(text)[:1000]) + "…"
		}
		rendered[i] = fmt.Sprintf("[%s] %s: %s\n", l.Time.Format("2006-01-02 15:04"), l.Speaker, strings.ReplaceAll(text, "\n", " "))
		total += len(rendered[i])
	}
	head, tail := len(rendered), len(rendered)
	if total > limit {
		used := 0
		head = 0
		for head < len(rendered) && used+len(rendered[head]) <= limit/3 {
			used += len(rendered[head])
			head++
		}
		tail = len(rendered)
		for tail > head && used+len(rendered[tail-1]) <= limit {
			used += len(rendered[tail-1])
			tail--
		}
	}
	for _, r := range rendered[:head] {
		b.WriteString(r)
	}
	if left := tail - head + omitted; left > 0 {
		fmt.Fprintf(b, "… (%d messages left out) …\n", left)
	}
	for _, r := range rendered[tail:] {
		b.WriteString(r)
	}
}
