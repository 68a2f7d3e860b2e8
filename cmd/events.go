package cmd

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cyan-agent/cyan/events"
)

func runEvents(io IO, args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			newFlags(io, "events").Usage()
			return nil
		}
		return &usageError{msg: "say what to do: cyan events ls [--level L] [--channel C] [--json], or cyan events rollup [--now RFC3339]"}
	}
	switch args[0] {
	case "ls":
		return eventsLs(io, args[1:])
	case "rollup":
		return eventsRollup(io, args[1:])
	}
	return &usageError{msg: fmt.Sprintf("unknown verb %q; the events command has ls and rollup", args[0])}
}

// eventsList is the daemon's answer to GET /api/v1/events.
type eventsList struct {
	Events  []events.Event         `json:"events"`
	Pending []events.PendingRollup `json:"pending"`
}

func eventsLs(io IO, args []string) error {
	fs := newFlags(io, "events")
	level := fs.String("level", "", "only records of this `level`: year, month, week, day or event")
	channel := fs.String("channel", "", "only this `channel`")
	limit := fs.Int("limit", 100, "the newest `n` records")
	asJSON := fs.Bool("json", false, "print the daemon's JSON answer")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if *level != "" {
		if _, err := events.ParseLevel(*level); err != nil {
			return &usageError{msg: strings.TrimPrefix(err.Error(), "invalid: ")}
		}
	}
	cfg, err := loadConfig(io)
	if err != nil {
		return err
	}
	path := "/api/v1/events" + query("level", *level, "channel", *channel, "limit", strconv.Itoa(*limit))
	if *asJSON {
		return printRaw(io, newClient(cfg), path)
	}
	var out eventsList
	if err := newClient(cfg).do("GET", path, nil, &out); err != nil {
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

func eventsRollup(io IO, args []string) error {
	fs := newFlags(io, "events")
	now := fs.String("now", "", "run every rollup due as of this RFC 3339 `time` (default: now)")
	asJSON := fs.Bool("json", false, "print the daemon's JSON answer")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if *now != "" {
		if _, err := time.Parse(time.RFC3339, *now); err != nil {
			return &usageError{msg: fmt.Sprintf("--now %q is not an RFC 3339 time such as 2026-02-16T03:16:00+08:00", *now)}
		}
	}
	cfg, err := loadConfig(io)
	if err != nil {
		return err
	}
	var rep events.Report
	if err := newClient(cfg).do("POST", "/api/v1/events/rollup", map[string]string{"now": *now}, &rep); err != nil {
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

func runObjects(io IO, args []string) error {
	if len(args) > 0 && args[0] == "confirm" {
		return runConfirmBlock(io, args[1:])
	}
	var out struct {
		Objects []events.Object `json:"objects"`
	}
	if printed, err := lsFetch(io, "objects", args, &out); err != nil || printed {
		return err
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

// runConfirmBlock is "cyan objects confirm OBJECT BLOCK": the owner vouches
// for a block a conversation made, so it shows in the owner's private
// prompts too.
func runConfirmBlock(io IO, args []string) error {
	fs := newFlags(io, "objects confirm")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return &usageError{msg: "cyan objects confirm OBJECT-ID BLOCK-ID (cyan objects ls shows both)"}
	}
	cfg, err := loadConfig(io)
	if err != nil {
		return err
	}
	var out struct {
		Block events.Block `json:"block"`
	}
	if err := newClient(cfg).do("POST", "/api/v1/objects/"+url.PathEscape(pos[0])+"/blocks/"+url.PathEscape(pos[1])+"/confirm", struct{}{}, &out); err != nil {
		return err
	}
	fmt.Fprintf(io.Stdout, "confirmed: %s is yours now\n", oneLine(out.Block.Text))
	return nil
}

func runRelations(io IO, args []string) error {
	var out struct {
		Relations []events.Relation `json:"relations"`
	}
	if printed, err := lsFetch(io, "relations", args, &out); err != nil || printed {
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

// lsVerb parses "ls [--json]", the one verb of objects and relations.
// lsFetch runs "cyan NAME ls [--json]": with --json it prints the daemon's
// answer to GET /api/v1/NAME (printed is true); otherwise it decodes the
// answer into out for the caller to show.
func lsFetch(io IO, name string, args []string, out any) (printed bool, err error) {
	asJSON, err := lsVerb(io, name, args)
	if err != nil {
		return false, err
	}
	cfg, err := loadConfig(io)
	if err != nil {
		return false, err
	}
	if asJSON {
		return true, printRaw(io, newClient(cfg), "/api/v1/"+name)
	}
	return false, newClient(cfg).do("GET", "/api/v1/"+name, nil, out)
}

func lsVerb(io IO, name string, args []string) (asJSON bool, err error) {
	fs := newFlags(io, name)
	j := fs.Bool("json", false, "print the daemon's JSON answer")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return false, err
	}
	if len(pos) != 1 || pos[0] != "ls" {
		if name == "objects" {
			return false, &usageError{msg: "cyan objects ls [--json] | cyan objects confirm OBJECT-ID BLOCK-ID"}
		}
		return false, &usageError{msg: fmt.Sprintf("the %s command has one verb: cyan %s ls [--json]", name, name)}
	}
	return *j, nil
}

func printRaw(io IO, c *client, path string) error {
	var v any
	if err := c.do("GET", path, nil, &v); err != nil {
		return err
	}
	return printJSON(io.Stdout, v)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
