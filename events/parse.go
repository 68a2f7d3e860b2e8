package events

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/cyan-agent/cyan/llm"
)

// The parsers below read a model's answer, which is untrusted text: they
// accept the JSON object wherever the model put it (bare, fenced, after a
// <think> block, amid prose), bound every string and list, and drop what
// does not fit instead of failing on it. They fail only when no usable
// object is there, so the step is retried.

// Bounds on what a model's answer may add.
const (
	maxTitleRunes = 200
	maxFactRunes  = 400
	maxNameRunes  = 80
	maxListItems  = 32
)

// jsonObject finds the first JSON object in a model's answer.
func jsonObject(content string) (json.RawMessage, error) {
	answer, _ := llm.SplitThink(content)
	s := strings.TrimSpace(answer)
	for i := strings.IndexByte(s, '{'); i >= 0; {
		dec := json.NewDecoder(strings.NewReader(s[i:]))
		var raw json.RawMessage
		if err := dec.Decode(&raw); err == nil && len(raw) > 0 && raw[0] == '{' {
			return raw, nil
		}
		j := strings.IndexByte(s[i+1:], '{')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return nil, errors.New("the answer holds no JSON object")
}

// cleanText trims, joins lines and bounds a model's string.
func cleanText(s string, limit int) string {
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "")), " ")
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	r := []rune(s)
	return string(r[:limit-1]) + "…"
}

// parseTopicTitle reads the answer of TitleTopic.
func parseTopicTitle(content string) (TopicTitle, error) {
	raw, err := jsonObject(content)
	if err != nil {
		return TopicTitle{}, err
	}
	var v struct {
		Title      string          `json:"title"`
		Importance json.RawMessage `json:"importance"`
		Includes   []any           `json:"includes"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return TopicTitle{}, fmt.Errorf("the answer is not a title object: %w", err)
	}
	out := TopicTitle{Title: cleanText(v.Title, maxTitleRunes), Importance: number(v.Importance)}
	if out.Title == "" {
		return TopicTitle{}, errors.New("the answer has no title")
	}
	for _, x := range v.Includes {
		if s, ok := x.(string); ok && s != "" && len(out.Includes) < maxListItems {
			out.Includes = append(out.Includes, strings.TrimSpace(s))
		}
	}
	return out, nil
}

// parseSummary reads the answer of Summarize.
func parseSummary(content string) (Summary, error) {
	raw, err := jsonObject(content)
	if err != nil {
		return Summary{}, err
	}
	var v struct {
		Title      string          `json:"title"`
		Summary    string          `json:"summary"`
		Importance json.RawMessage `json:"importance"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return Summary{}, fmt.Errorf("the answer is not a summary object: %w", err)
	}
	if v.Title == "" {
		v.Title = v.Summary
	}
	out := Summary{Title: cleanText(v.Title, maxTitleRunes), Importance: number(v.Importance)}
	if out.Title == "" {
		return Summary{}, errors.New("the answer has no summary")
	}
	return out, nil
}

// parseExtraction reads the answer of Extract. Items missing a name or a
// text are dropped; an answer with nothing to add is valid.
func parseExtraction(content string) (Extraction, error) {
	raw, err := jsonObject(content)
	if err != nil {
		return Extraction{}, err
	}
	var v struct {
		Facts []struct {
			Object string `json:"object"`
			Kind   string `json:"kind"`
			Text   string `json:"text"`
		} `json:"facts"`
		Lines []struct {
			A        string          `json:"a"`
			B        string          `json:"b"`
			Text     string          `json:"text"`
			Strength json.RawMessage `json:"strength"`
		} `json:"lines"`
		Reinforce  []any `json:"reinforce"`
		Contradict []any `json:"contradict"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return Extraction{}, fmt.Errorf("the answer is not an extraction object: %w", err)
	}
	out := Extraction{Facts: []Fact{}, Lines: []NewLine{}, Reinforce: []string{}, Contradict: []string{}}
	for _, f := range v.Facts {
		fact := Fact{Object: cleanText(f.Object, maxNameRunes), Kind: kindOf(f.Kind), Text: cleanText(f.Text, maxFactRunes)}
		if fact.Object != "" && fact.Text != "" && len(out.Facts) < maxListItems {
			out.Facts = append(out.Facts, fact)
		}
	}
	for _, ln := range v.Lines {
		nl := NewLine{A: cleanText(ln.A, maxNameRunes), B: cleanText(ln.B, maxNameRunes), Text: cleanText(ln.Text, maxFactRunes), Strength: number(ln.Strength)}
		if nl.A != "" && nl.B != "" && nl.Text != "" && normName(nl.A) != normName(nl.B) && len(out.Lines) < maxListItems {
			out.Lines = append(out.Lines, nl)
		}
	}
	out.Reinforce = stringIDs(v.Reinforce)
	out.Contradict = stringIDs(v.Contradict)
	return out, nil
}

func stringIDs(xs []any) []string {
	out := []string{}
	for _, x := range xs {
		if s, ok := x.(string); ok && s != "" && len(out) < maxListItems {
			out = append(out, cleanText(s, 64))
		}
	}
	return out
}

// number reads a score given as a number or a numeric string, clamped to
// [0, 1]; a score on a 0–10 or 0–100 scale is brought down to it.
func number(raw json.RawMessage) float64 {
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return 0.5
		}
		if _, err := fmt.Sscanf(strings.TrimSpace(s), "%g", &f); err != nil {
			return 0.5
		}
	}
	switch {
	case f > 10 && f <= 100:
		f /= 100
	case f > 1 && f <= 10:
		f /= 10
	}
	return clamp01(f)
}

// kindOf maps a model's kind to person, agent or thing.
func kindOf(s string) string {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "agent", "ai", "bot", "assistant":
		return KindAgent
	case "thing", "object", "place", "project", "pet", "organization", "group":
		return KindThing
	}
	return KindPerson
}

// normName is the form names are compared in.
func normName(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }
