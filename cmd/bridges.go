package cmd

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/cyan-agent/cyan/api"
	"github.com/cyan-agent/cyan/bridge"
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
			fmt.Fprintln(io.Stdout, "no bridges are configured (see docs/bridges.md)")
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
			if b.Silent != "" {
				state += " (silent: " + b.Silent + ")"
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
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, b := range out.Bridges {
			for _, u := range b.Undelivered {
				outcome := "not delivered"
				if u.Outcome == "unknown" {
					outcome = "outcome unknown (sent, never confirmed; not sent again)"
				}
				fmt.Fprintf(io.Stdout, "%s: %s %s %q: %s (the model was told)\n", outcome, when(u.At), u.Channel, u.Text, u.Reason)
			}
			if b.Muted > 0 {
				fmt.Fprintf(io.Stdout, "muted: %s: the bot is muted in %d chat(s); their answers wait for the mute to end\n", b.Name, b.Muted)
			}
			for _, s := range b.Stale {
				fmt.Fprintf(io.Stdout, "not resumed: %s %s message %s from %s: older than bridges.resume_max_age when the daemon started; answered at the chat's next turn\n",
					when(s.At), s.Channel, s.MessageID, orDash(s.Speaker))
			}
		}
		return nil
	}
}

// bridgesWho: cyan bridges who [--json] — who wrote to each bot privately,
// with the permissions.owners line that names them.
func bridgesWho(f *flags) run {
	asJSON := f.json()
	return func(io IO, _ []string) error {
		c, _, err := dial(io)
		if err != nil {
			return err
		}
		var out api.BridgeList
		if err := c.do("GET", "/api/v1/bridges", nil, &out); err != nil {
			return err
		}
		type row struct {
			Bridge string `json:"bridge"`
			bridge.Writer
		}
		rows := []row{}
		for _, b := range out.Bridges {
			for _, w := range b.Writers {
				rows = append(rows, row{Bridge: b.Name, Writer: w})
			}
		}
		if *asJSON {
			return printJSON(io.Stdout, map[string]any{"writers": rows})
		}
		if len(out.Bridges) == 0 {
			fmt.Fprintln(io.Stdout, "no bridges are configured (see docs/bridges.md)")
			return nil
		}
		if len(rows) == 0 {
			fmt.Fprintln(io.Stdout, "nobody has written to a bot privately yet: send your bot a private message, then run this again")
			return nil
		}
		tw := tabwriter.NewWriter(io.Stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "BRIDGE\tUSER ID\tNAME\tLAST\tOWNER\tOWNERS LINE")
		for _, r := range rows {
			name := r.Name
			if r.Username != "" {
				name = strings.TrimSpace(name + " @" + r.Username)
			}
			owner := "no"
			if r.Owner {
				owner = "yes"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Bridge, r.ID, orDash(name), when(r.Last), owner, r.Line)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(io.Stdout, "to make one of these you, add its line to permissions.owners (keep local for the terminal and the page), e.g.:")
		fmt.Fprintf(io.Stdout, "  permissions:\n    owners: [local, %q]\n", rows[0].Line)
		return nil
	}
}
