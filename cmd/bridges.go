package cmd

import (
	"fmt"
	"text/tabwriter"

	"github.com/cyan-agent/cyan/api"
)

// bridgesLs: cyan bridges ls [--json] — each bridge's state.
func bridgesLs(f *flags) run {
	asJSON := f.json()
	return func(io IO, _ []string) error {
		c, _, err := dial(io)
		if err != nil {
			return err
		}
		var out api.BridgeList
		if printed, err := c.list(io, "/api/v1/bridges", *asJSON, &out); printed || err != nil {
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
			if b.State != "" && !b.Connected {
				state = b.State
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
}
