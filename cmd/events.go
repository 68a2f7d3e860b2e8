package cmd

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cyan-agent/cyan/events"
)

// eventsList is the daemon's answer to GET /api/v1/events.
type eventsList struct {
	Events  []events.Event         `json:"events"`
	Pending []events.PendingRollup `json:"pending"`
}

func eventsLs(f *flags) run {
	level := f.String("level", "", "only records of this `level`: year, month, week, day or event")
	channel := f.String("channel", "", "only this `channel`")
	limit := f.limit(100, 10000, "the newest `N` records")
	asJSON := f.json()
	return func(io IO, _ []string) error {
		if *level != "" {
			if _, err := events.ParseLevel(*level); err != nil {
				return &usageError{msg: "--level: " + strings.TrimPrefix(err.Error(), "invalid: ")}
			}
		}
		c, _, err := dial(io)
		if err != nil {
			return err
		}
		path := "/api/v1/events" + query("level", *level, "channel", *channel, "limit", strconv.Itoa(*limit))
		if *asJSON {
			return printRaw(io, c, path)
		}
		var out eventsList
		if err := c.do("GET", path, nil, &out); err != nil {
			return err
		}
		if len(out.Events) == 0 {
			fmt.Fprintln(io.Stdout, "no event records yet (a topic becomes one after a silence; 'cyan events rollup' closes what is due now)")
		} else {
			tw := tabwriter.NewWriter(io.Stdout, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "LABEL\tLEVEL\tCHANNEL\tIMP\tS\tR\tTITLE")
			for _, e := range out.Events {
				title := e.Title
				if p := e.Pending; p != nil {
					switch {
					case p.Title && p.LastError != "":
						title = fmt.Sprintf("%s(title failed %d×, next try %s: %s)", prefix(title), p.Attempts, localTime(p.NextTry), p.LastError)
					case p.Title:
						title = prefix(title) + "(being titled)"
					case p.LastError != "":
						title += fmt.Sprintf(" (extraction failed %d×: %s)", p.Attempts, p.LastError)
					}
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%.2f\t%.1fd\t%.2f\t%s\n", e.Label, e.Level, e.Source.Channel, e.Importance, e.MemoryState.S, e.MemoryState.R, oneLine(title))
			}
			tw.Flush()
		}
		printPending(io, out.Pending)
		return nil
	}
}

func prefix(title string) string {
	if title == "" {
		return ""
	}
	return title + " "
}

func printPending(io IO, pending []events.PendingRollup) {
	if len(pending) == 0 {
		return
	}
	fmt.Fprintln(io.Stdout, "\nPending rollups:")
	for _, p := range pending {
		line := fmt.Sprintf("  %s %s (%s): %d due", p.Level, p.Label, p.Channel, p.Due)
		if p.Attempts > 0 {
			line += fmt.Sprintf("; failed %d×, next try %s: %s", p.Attempts, localTime(p.NextTry), p.LastError)
		}
		if p.Waiting != "" {
			line += "; waiting: " + p.Waiting
		}
		fmt.Fprintln(io.Stdout, line)
	}
}

func eventsRollup(f *flags) run {
	now := f.String("now", "", "run every rollup due as of this RFC 3339 `time` (default: now)")
	asJSON := f.json()
	return func(io IO, _ []string) error {
		if *now != "" {
			if _, err := time.Parse(time.RFC3339, *now); err != nil {
				return &usageError{msg: fmt.Sprintf("--now %q is not an RFC 3339 time such as 2026-02-16T03:16:00+08:00", *now)}
			}
		}
		c, _, err := dial(io)
		if err != nil {
			return err
		}
		var rep events.Report
		if err := c.do("POST", "/api/v1/events/rollup", map[string]string{"now": *now}, &rep); err != nil {
			return err
		}
		if *asJSON {
			return printJSON(io.Stdout, rep)
		}
		fmt.Fprintf(io.Stdout, "closed %d topics, titled %d, extracted from %d\n", rep.Closed, rep.Titled, rep.Extracted)
		for _, r := range rep.Rollups {
			fmt.Fprintf(io.Stdout, "wrote %s\n", r)
		}
		for _, f := range rep.Failed {
			fmt.Fprintf(io.Stdout, "failed (will be retried): %s\n", f)
		}
		printPending(io, rep.Pending)
		return nil
	}
}

func objectsLs(f *flags) run {
	asJSON := f.json()
	return func(io IO, _ []string) error {
		var out struct {
			Objects []events.Object `json:"objects"`
		}
		if printed, err := lsFetch(io, "objects", *asJSON, &out); err != nil || printed {
			return err
		}
		if len(out.Objects) == 0 {
			fmt.Fprintln(io.Stdout, "no objects yet")
		}
		for _, o := range out.Objects {
			extra := o.Kind
			if len(o.Aliases) > 0 {
				extra += ", also " + strings.Join(o.Aliases, ", ")
			}
			fmt.Fprintf(io.Stdout, "%s (%s) %s\n", o.Name, extra, o.ID)
			for _, b := range o.Blocks {
				fmt.Fprintf(io.Stdout, "  %s %s  [%s %s, %s]\n", b.ID, oneLine(b.Text), b.Provenance.By, localTime(b.Provenance.Time), blockScope(b.Provenance))
			}
		}
		return nil
	}
}

// blockScope says whose knowledge a block is.
func blockScope(p events.Provenance) string {
	switch {
	case p.Scope == nil && p.Channel == "":
		return "shared"
	case p.Scope == nil:
		return "from " + p.Channel
	case p.Scope.Owner:
		return "yours"
	case p.Scope.Channel == "":
		return "public"
	}
	return "from " + p.Scope.Channel + " (confirm to make it yours)"
}

// objectsConfirm is "cyan objects confirm OBJECT BLOCK": the owner vouches
// for a block a conversation made, so it shows in the owner's private
// prompts too.
func objectsConfirm(f *flags) run {
	asJSON := f.json()
	return func(io IO, args []string) error {
		c, _, err := dial(io)
		if err != nil {
			return err
		}
		var raw json.RawMessage
		if err := c.do("POST", "/api/v1/objects/"+url.PathEscape(args[0])+"/blocks/"+url.PathEscape(args[1])+"/confirm", struct{}{}, &raw); err != nil {
			return err
		}
		if *asJSON {
			return printJSON(io.Stdout, raw)
		}
		var out struct {
			Block events.Block `json:"block"`
		}
		if err := json.Unmarshal(raw, &out); err != nil {
			return err
		}
		fmt.Fprintf(io.Stdout, "confirmed: %s is yours now\n", oneLine(out.Block.Text))
		return nil
	}
}

func relationsLs(f *flags) run {
	asJSON := f.json()
	return func(io IO, _ []string) error {
		var out struct {
			Relations []events.Relation `json:"relations"`
		}
		if printed, err := lsFetch(io, "relations", *asJSON, &out); err != nil || printed {
			return err
		}
		if len(out.Relations) == 0 {
			fmt.Fprintln(io.Stdout, "no relations yet")
		}
		for _, r := range out.Relations {
			fmt.Fprintf(io.Stdout, "%s — %s\n", r.AName, r.BName)
			for _, l := range r.Lines {
				if l.Valid {
					fmt.Fprintf(io.Stdout, "  %.2f  %s\n", l.Weight, oneLine(l.Text))
				} else {
					fmt.Fprintf(io.Stdout, "  ----  %s (no longer valid since %s)\n", oneLine(l.Text), localTime(*l.InvalidSince))
				}
			}
		}
		return nil
	}
}

func theoriesLs(f *flags) run {
	asJSON := f.json()
	return func(io IO, _ []string) error {
		var out struct {
			Theories []events.Theory `json:"theories"`
		}
		if printed, err := lsFetch(io, "theories", *asJSON, &out); err != nil || printed {
			return err
		}
		if len(out.Theories) == 0 {
			fmt.Fprintln(io.Stdout, "no theories yet")
			return nil
		}
		tw := tabwriter.NewWriter(io.Stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tTITLE\tVERSION\tSOURCES\tUPDATED\tARTICLE")
		for _, t := range out.Theories {
			first, _, _ := strings.Cut(strings.TrimSpace(t.Article), "\n")
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\n", t.ID, oneLine(t.Title), t.Version, len(t.RelatedInfo), localTime(t.Updated), clipText(first, 60))
		}
		return tw.Flush()
	}
}

// lsFetch gets GET /api/v1/NAME: with asJSON it prints the answer
// (printed is true); otherwise it decodes it into out for the caller to
// show.
func lsFetch(io IO, name string, asJSON bool, out any) (printed bool, err error) {
	c, _, err := dial(io)
	if err != nil {
		return false, err
	}
	if asJSON {
		return true, printRaw(io, c, "/api/v1/"+name)
	}
	return false, c.do("GET", "/api/v1/"+name, nil, out)
}

func printRaw(io IO, c *client, path string) error {
	var v any
	if err := c.do("GET", path, nil, &v); err != nil {
		return err
	}
	return printJSON(io.Stdout, v)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
