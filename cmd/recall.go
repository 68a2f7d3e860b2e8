package cmd

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cyan-agent/cyan/recall"
)

func recallCmd(f *flags) run {
	channel := f.String("channel", "", "search only this `channel` (default: every channel)")
	limit := f.limit(10, 64, "return the best `N` results, best first")
	mode := f.String("mode", "search", "the `mode`: search (ranked retrieval, no model) or tool (the model filters and summarises)")
	threshold := f.Float64("threshold", 0, "drop results scoring under this `score` (0–100)")
	since := f.String("since", "", "only messages at or after this `time` (2024-05-01 or RFC 3339)")
	until := f.String("until", "", "only messages before this `time`")
	asJSON := f.json()
	return func(io IO, pos []string) error {
		q := strings.TrimSpace(strings.Join(pos, " "))
		if q == "" {
			return &usageError{msg: "the query is empty; e.g. cyan recall 'what did nyalia say about her exams'"}
		}
		if *mode != "search" && *mode != "tool" {
			return &usageError{msg: fmt.Sprintf("--mode %q is not search or tool", *mode)}
		}
		if *threshold < 0 || *threshold > 100 {
			return &usageError{msg: fmt.Sprintf("--threshold %g is outside 0–100", *threshold)}
		}
		c, _, err := dial(io)
		if err != nil {
			return err
		}
		body := map[string]any{"prompt": q, "max_results": *limit, "score_threshold": *threshold, "mode": *mode,
			"channel": *channel, "since": *since, "until": *until}
		var raw json.RawMessage
		if err := c.do("POST", "/api/v1/recall", body, &raw); err != nil {
			return err
		}
		if *asJSON {
			return printJSON(io.Stdout, raw)
		}
		var ans recall.Response
		if err := json.Unmarshal(raw, &ans); err != nil {
			return fmt.Errorf("unreadable answer from the daemon: %w", err)
		}
		if ans.Note != "" {
			fmt.Fprintln(io.Stderr, "note:", ans.Note)
		}
		if len(ans.Queries) > 0 {
			fmt.Fprintf(io.Stderr, "also searched: %s\n", strings.Join(ans.Queries, "; "))
		}
		if ans.SummarizedInfo != "" {
			fmt.Fprintf(io.Stdout, "%s\n\n", ans.SummarizedInfo)
		}
		if len(ans.Results) == 0 {
			fmt.Fprintln(io.Stdout, "nothing found")
		}
		for _, r := range ans.Results {
			fmt.Fprintf(io.Stdout, "[%g] %s, %s\n", r.Score, r.Source, r.Location)
			for _, line := range strings.Split(r.Text, "\n") {
				fmt.Fprintf(io.Stdout, "    %s\n", line)
			}
		}
		return nil
	}
}
