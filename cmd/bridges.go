package cmd

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/cyan-agent/cyan/bridge"
)

// runBridges: cyan bridges [--json] — each bridge's state.
func runBridges(io IO, args []string) error {
	fs := newFlags(io, "bridges")
	asJSON := fs.Bool("json", false, "print the daemon's JSON answer")
	if _, err := parseArgs(fs, args); err != nil {
		return err
	}
	cfg, err := loadConfig(io)
	if err != nil {
		return err
	}
	var raw json.RawMessage
	if err := newClient(cfg).do("GET", "/api/v1/bridges", nil, &raw); err != nil {
		return err
	}
	if *asJSON {
		return printJSON(io.Stdout, raw)
	}
	var out struct {
		Bridges []bridge.Status `json:"bridges"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return err
	}
	if len(out.Bridges) == 0 {
		fmt.Fprintln(io.Stdout, "no bridges are configured (see bridges: in the README)")
		return nil
	}
	tw := tabwriter.NewWriter(io.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tPLATFORM\tSTATE\tBOT\tCHATS\tQUEUE\tIN/STORED\tTURNS\tSENT/FAILED\tLAST ERROR")
	for _, b := range out.Bridges {
		state := "disconnected"
		if b.Connected {
			state = "connected"
		}
		if !b.Since.IsZero() {
			state += " since " + when(b.Since)
		}
		bot := b.Self
		if b.SelfName != "" {
			bot += " (" + b.SelfName + ")"
		}
		lastErr := "-"
		if b.LastError != "" {
			lastErr = when(b.ErrorAt) + " " + b.LastError
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d/%d\t%d\t%d/%d\t%s\n", b.Name, b.Platform, state, orDash(bot),
			b.Chats, b.Queue, b.Received, b.Stored, b.Turns, b.Sent, b.Failed, lastErr)
	}
	return tw.Flush()
}
