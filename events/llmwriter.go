package events

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/cyan-agent/cyan/llm"
)

// LLMWriter is the Writer made of plain LLM calls with a JSON-schema
// response format. Prompt scripts will take its place; until then each step
// is one call whose answer the parsers in parse.go read.
type LLMWriter struct {
	client llm.Client
	// LogChars bounds the chat log sent in one call; the middle of a longer
	// topic is left out (and said to be).
	LogChars int
}

// NewLLMWriter makes a writer that calls c.
func NewLLMWriter(c llm.Client) *LLMWriter { return &LLMWriter{client: c, LogChars: 12000} }

var _ Writer = (*LLMWriter)(nil)

// Names of the response formats; the fake LLM in tests answers by them.
const (
	FormatTitle   = "event_title"
	FormatSummary = "event_summary"
	FormatExtract = "event_extraction"
)

const titleSchema = `{"type":"object","properties":{"title":{"type":"string"},"importance":{"type":"number"},"includes":{"type":"array","items":{"type":"string"}}},"required":["title","importance","includes"],"additionalProperties":false}`

const summarySchema = `{"type":"object","properties":{"title":{"type":"string"},"importance":{"type":"number"}},"required":["title","importance"],"additionalProperties":false}`

const extractSchema = `{"type":"object","properties":{` +
	`"facts":{"type":"array","items":{"type":"object","properties":{"object":{"type":"string"},"kind":{"type":"string","enum":["person","agent","thing"]},"text":{"type":"string"}},"required":["object","kind","text"],"additionalProperties":false}},` +
	`"lines":{"type":"array","items":{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"},"text":{"type":"string"},"strength":{"type":"number"}},"required":["a","b","text","strength"],"additionalProperties":false}},` +
	`"reinforce":{"type":"array","items":{"type":"string"}},"contradict":{"type":"array","items":{"type":"string"}}},` +
	`"required":["facts","lines","reinforce","contradict"],"additionalProperties":false}`

const titleInstructions = `You keep the life log of %s, an AI companion. Below is one topic of a conversation %s took part in.
Write its record as %s remembers it: one short sentence in the first person, in the language of the conversation, saying who did what ("kemo asked me about RAG and KAG; I told her KAG is newer").
Score its importance from 0 (small talk) to 1 (a life event, a promise, a decision, a finished piece of work).
If it continues one of the earlier records listed, put their ids in "includes".
Answer with JSON only: {"title": "...", "importance": 0.0, "includes": []}.`

const summaryInstructions = `You keep the life log of %s, an AI companion. Below are the records of one %s (%s).
Summarise them as %s remembers that %s: one or two sentences in the first person, in the language of the records, keeping the people, matters and outcomes that count.
Score its importance from 0 to 1.
Answer with JSON only: {"title": "...", "importance": 0.0}.`

const extractInstructions = `You keep what %s, an AI companion, knows about the people, agents and things around it, and the relations between them.
From the conversation below, list only what is NEW and stated or clearly shown:
- "facts": facts about one object each (a person, an agent or a thing); unrelated facts go in separate items; "%s" is the companion itself.
- "lines": relations between two objects, one aspect per line ("alice trusts %s with her schedule"), with "strength" 0–1 for how much this conversation shows it.
- "reinforce": ids of known lines this conversation shows again.
- "contradict": ids of known lines this conversation shows are no longer true.
Do not repeat known facts. Answer with JSON only.`

// TitleTopic implements Writer.
func (w *LLMWriter) TitleTopic(ctx context.Context, in TopicInput) (TopicTitle, error) {
	var b strings.Builder
	if in.Title != "" {
		fmt.Fprintf(&b, "The agent closed this topic as: %s\nKeep that title; score it.\n\n", in.Title)
	}
	if len(in.Earlier) > 0 {
		b.WriteString("Earlier records:\n")
		for _, e := range in.Earlier {
			fmt.Fprintf(&b, "- id %s: %s %s\n", e.ID, e.Label, e.Title)
		}
		b.WriteString("\n")
	}
	b.WriteString("Conversation:\n")
	w.writeLog(&b, in.Lines, in.Omitted)
	content, err := w.call(ctx, fmt.Sprintf(titleInstructions, in.Agent, in.Agent, in.Agent), b.String(), FormatTitle, titleSchema)
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

// Summarize implements Writer.
func (w *LLMWriter) Summarize(ctx context.Context, in RollupInput) (Summary, error) {
	var b strings.Builder
	for _, c := range in.Children {
		fmt.Fprintf(&b, "%s %s (importance %.1f)\n", c.Label, c.Title, c.Importance)
	}
	sys := fmt.Sprintf(summaryInstructions, in.Agent, in.Level, in.Label, in.Agent, in.Level)
	content, err := w.call(ctx, sys, b.String(), FormatSummary, summarySchema)
	if err != nil {
		return Summary{}, err
	}
	out, err := parseSummary(content)
	if err != nil {
		return Summary{}, fmt.Errorf("events: summary answer: %w", err)
	}
	return out, nil
}

// Extract implements Writer.
func (w *LLMWriter) Extract(ctx context.Context, in ExtractInput) (Extraction, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "Topic: %s\n\nKnown objects:\n", in.Title)
	for _, o := range in.Objects {
		fmt.Fprintf(&b, "- %s (%s)\n", o.Name, o.Kind)
		for _, bl := range o.Blocks {
			fmt.Fprintf(&b, "  - %s\n", bl)
		}
	}
	if len(in.Known) > 0 {
		b.WriteString("\nKnown lines:\n")
		for _, k := range in.Known {
			fmt.Fprintf(&b, "- id %s: %s / %s: %s\n", k.ID, k.A, k.B, k.Text)
		}
	}
	b.WriteString("\nConversation:\n")
	w.writeLog(&b, in.Lines, in.Omitted)
	content, err := w.call(ctx, fmt.Sprintf(extractInstructions, in.Agent, in.Agent, in.Agent), b.String(), FormatExtract, extractSchema)
	if err != nil {
		return Extraction{}, err
	}
	out, err := parseExtraction(content)
	if err != nil {
		return Extraction{}, fmt.Errorf("events: extraction answer: %w", err)
	}
	return out, nil
}

func (w *LLMWriter) call(ctx context.Context, system, user, format, schema string) (string, error) {
	resp, err := w.client.Chat(ctx, llm.Request{
		Messages: []llm.Message{{Role: llm.RoleSystem, Content: system}, {Role: llm.RoleUser, Content: user}},
		// A title or summary is short; a thinking model needs room before it.
		MaxTokens:      2048,
		ResponseFormat: &llm.ResponseFormat{Name: format, Schema: json.RawMessage(schema), Strict: true},
	})
	if err != nil {
		return "", fmt.Errorf("events: %s: %w", format, err)
	}
	return resp.Content, nil
}

// writeLog writes a chat log within LogChars, leaving out the middle of a
// long one (its start says what the topic was, its end how it came out).
func (w *LLMWriter) writeLog(b *strings.Builder, lines []LogLine, omitted int) {
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
