package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/cyan-agent/cyan/generate"
	"github.com/cyan-agent/cyan/turn"
)

// traceLs lists the newest generate calls; with --channel, the channel's
// last prompt packet first.
func traceLs(f *flags) run {
	channel := f.String("channel", "", "show the last prompt packet of this `channel`, and list only its generate calls")
	limit := f.limit(20, 1000, "list the newest `N` generate calls")
	name := f.String("name", "", "list only the generate calls of this script or tool `name`")
	asJSON := f.json()
	return func(io IO, _ []string) error {
		c, _, err := dial(io)
		if err != nil {
			return err
		}
		var lastTurn json.RawMessage
		if *channel != "" {
			err := c.do("GET", "/api/v1/trace/last"+query("channel", *channel), nil, &lastTurn)
			var ae *apiError
			if errors.As(err, &ae) && ae.Status == 404 && ae.Type == "not_found" {
				lastTurn = nil
			} else if err != nil {
				return err
			}
		}
		var list struct {
			Traces []generate.Summary `json:"traces"`
		}
		if err := c.do("GET", "/api/v1/traces"+query("channel", *channel, "name", *name, "last", strconv.Itoa(*limit)), nil, &list); err != nil {
			return err
		}
		if *asJSON {
			if list.Traces == nil {
				list.Traces = []generate.Summary{}
			}
			out := map[string]any{"generate": list.Traces}
			if *channel != "" {
				out["turn"] = lastTurn
			}
			return printJSON(io.Stdout, out)
		}
		if *channel != "" {
			if lastTurn == nil {
				fmt.Fprintf(io.Stdout, "No turn has run in channel %q yet.\n", *channel)
			} else {
				var t turn.Trace
				if err := json.Unmarshal(lastTurn, &t); err != nil {
					return fmt.Errorf("unreadable trace: %w", err)
				}
				printTrace(io, &t)
			}
			fmt.Fprintln(io.Stdout)
		}
		printGenList(io.Stdout, list.Traces, *channel)
		return nil
	}
}

// traceShow prints one generate call in full.
func traceShow(f *flags) run {
	asJSON := f.json()
	return func(io IO, args []string) error {
		c, _, err := dial(io)
		if err != nil {
			return err
		}
		var raw json.RawMessage
		if err := c.do("GET", "/api/v1/traces/"+url.PathEscape(args[0]), nil, &raw); err != nil {
			return err
		}
		if *asJSON {
			return printJSON(io.Stdout, raw)
		}
		var t generate.Trace
		if err := json.Unmarshal(raw, &t); err != nil {
			return fmt.Errorf("unreadable trace: %w", err)
		}
		printGenTrace(io.Stdout, &t)
		return nil
	}
}

// printGenList is a table of generate calls, oldest first.
func printGenList(w io.Writer, list []generate.Summary, channel string) {
	where := ""
	if channel != "" {
		where = fmt.Sprintf(" in %q", channel)
	}
	if len(list) == 0 {
		fmt.Fprintf(w, "No generate calls%s are kept.\n", where)
		return
	}
	fmt.Fprintf(w, "Generate calls%s, oldest first (cyan trace show ID shows one):\n", where)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tNAME\tCHANNEL\tOK\tATTEMPTS\tTOKENS\tMS\tID")
	for _, s := range list {
		name := orDash(s.Name)
		if s.Site != "" {
			name += " [[" + s.Site + "]]"
		}
		ok := "yes"
		if !s.OK {
			ok = "NO"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\n", localTime(s.Time), name, orDash(s.Channel), ok, s.Attempts, s.Tokens, s.Millis, s.ID)
	}
	tw.Flush()
	for _, s := range list {
		if s.Error != "" {
			fmt.Fprintf(w, "  %s: %s\n", s.ID, s.Error)
		}
	}
}

// printGenTrace shows one generate call: who asked what, with which
// context and hints, each attempt and the result.
func printGenTrace(w io.Writer, t *generate.Trace) {
	title := orDash(t.Name)
	if t.Site != "" {
		title += " [[" + t.Site + "]]"
	}
	fmt.Fprintf(w, "Generate %s — %s at %s (model %s, %d ms, %d in / %d out tokens)\n", title, orDash(t.ID), localTime(t.Time),
		orDash(t.Model), t.Millis, t.Usage.InputTokens, t.Usage.OutputTokens)
	if t.File != "" {
		fmt.Fprintf(w, "Script: %s\n", t.File)
	}
	if t.Channel != "" {
		fmt.Fprintf(w, "Channel: %s\n", t.Channel)
	}
	if len(t.Packet) > 0 {
		fmt.Fprintf(w, "Packet: %s\n", t.Packet)
	}
	if t.Identity.Role != "" || t.Identity.Description != "" {
		fmt.Fprintf(w, "Identity: %s %s\n", t.Identity.Role, t.Identity.Description)
	}
	cfg := t.Config
	temp := "default"
	if cfg.Temperature != nil {
		temp = strconv.FormatFloat(*cfg.Temperature, 'g', -1, 64)
	}
	think, _ := json.Marshal(cfg.Think)
	fmt.Fprintf(w, "Config: max_output %d, attempts %d, temperature %s, think %s, strict %v, debug %v, JSON-schema output %v\n",
		cfg.MaxOutput, cfg.Attempts, temp, think, cfg.Strict, cfg.Debug, t.SchemaMode)
	fmt.Fprintf(w, "Instruction: %s\n", indentRest(t.Instruction, "  "))
	if len(t.Context) > 0 {
		fmt.Fprintln(w, "Context:")
		for _, c := range t.Context {
			budget := "none"
			if c.Budget > 0 {
				budget = strconv.Itoa(c.Budget)
			}
			clipped := ""
			if c.Clipped {
				clipped = ", clipped"
			}
			fmt.Fprintf(w, "  #%d [%s] source %s: %d tokens, budget %s%s\n", c.Index, c.Label, c.Source, c.Tokens, budget, clipped)
		}
	}
	if len(t.Shape) > 0 {
		fmt.Fprintf(w, "Shape: %s\n", t.Shape)
	}
	for _, warn := range t.Warnings {
		fmt.Fprintf(w, "Warning: %s\n", warn)
	}
	fmt.Fprintln(w, "\nMessages sent to the model:")
	for _, m := range t.Messages {
		fmt.Fprintf(w, "--- %s ---\n%s\n", m.Role, m.Content)
	}
	for _, a := range t.Attempts {
		fmt.Fprintf(w, "\nAttempt %d (%d ms, %d in / %d out tokens, finish %s)\n", a.N, a.Millis, a.Usage.InputTokens, a.Usage.OutputTokens, orDash(a.FinishReason))
		if a.Error != "" {
			fmt.Fprintf(w, "  error: %s\n", a.Error)
			continue
		}
		if a.Reasoning != "" {
			fmt.Fprintf(w, "  reasoning: %s\n", indentRest(a.Reasoning, "    "))
		}
		fmt.Fprintf(w, "  raw: %s\n", indentRest(a.Raw, "    "))
		if a.Validation.OK {
			fmt.Fprintln(w, "  valid")
		} else {
			fmt.Fprintf(w, "  invalid: %s\n", a.Validation.Error)
		}
		if len(a.Validation.Coerced) > 0 {
			fmt.Fprintf(w, "  coerced: %s\n", strings.Join(a.Validation.Coerced, "; "))
		}
		if a.Feedback != "" {
			fmt.Fprintf(w, "  told the model: %s\n", a.Feedback)
		}
	}
	switch {
	case t.Error != "":
		fmt.Fprintf(w, "\nFailed: %s\n", t.Error)
	case len(t.Result) > 0:
		fmt.Fprintf(w, "\nResult: %s\n", t.Result)
	}
}
