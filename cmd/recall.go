package cmd

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cyan-agent/cyan/recall"
)

func runRecall(io IO, args []string) error {
	fs := newFlags(io, "recall")
	channel := fs.String("channel", "", "search only this `channel` (default: every channel)")
	k := fs.Int("k", 10, "the most `results` to return (1–64)")
	mode := fs.String("mode", "search", "`search` (ranked retrieval, no model) or tool (the model filters and summarises)")
	threshold := fs.Float64("threshold", 0, "drop results scoring under this `score` (0–100)")
	since := fs.String("since", "", "only messages at or after this `time` (2024-05-01 or RFC 3339)")
	until := fs.String("until", "", "only messages before this `time`")
	asJSON := fs.Bool("json", false, "print the daemon's JSON answer")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	query := strings.TrimSpace(strings.Join(pos, " "))
	if query == "" {
		return &usageError{msg: "no query; try: cyan recall 'what did nyalia say about her exams'"}
	}
	if *mode != "search" && *mode != "tool" {
		return &usageError{msg: fmt.Sprintf("--mode %q is not search or tool", *mode)}
	}
	if *k < 1 || *k > 64 {
		return &usageError{msg: fmt.Sprintf("--k %d is outside 1–64", *k)}
	}
	cfg, err := loadConfig(io)
	if err != nil {
		return err
	}
	body := map[string]any{"prompt": query, "max_results": *k, "score_threshold": *threshold, "mode": *mode,
		"channel": *channel, "since": *since, "until": *until}
	var raw json.RawMessage
	if err := newClient(cfg).do("POST", "/api/v1/recall", body, &raw); err != nil {
		return err
	}
	if *asJSON {
		_, err := fmt.Fprintln(io.Stdout, string(raw))
		return err
	}
	var ans recall.Response
	if err := json.Unmarshal(raw, &ans); err != nil {
		return fmt.Errorf("unreadable answer from the daemon: %w", err)
	}
	if ans.Note != "" {
		fmt.Fprintln(io.Stderr, "note:", ans.Note)
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
