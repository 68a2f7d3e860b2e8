package cmd

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cyan-agent/cyan/api"
)

func observersLs(f *flags) run {
	asJSON := f.json()
	return func(io IO, _ []string) error {
		c, _, err := dial(io)
		if err != nil {
			return err
		}
		var out api.ObserverList
		if printed, err := c.list(io, "/api/v1/observers", *asJSON, &out); printed || err != nil {
			return err
		}
		tw := tabwriter.NewWriter(io.Stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tSOURCE\tTRIGGERS\tLAST RUN\tNEXT RUN\tTOKENS\tSTATE")
		for _, o := range out.Observers {
			tokens := fmt.Sprintf("%d", o.Spent)
			if o.Budget > 0 {
				tokens += fmt.Sprintf("/%d", o.Budget)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", o.Name, o.Source, strings.Join(o.Triggers, "; "),
				when(o.LastRun), when(o.NextRun), tokens, o.State)
		}
		return tw.Flush()
	}
}

func observersRun(f *flags) run {
	asJSON := f.json()
	return func(io IO, args []string) error {
		c, _, err := dial(io)
		if err != nil {
			return err
		}
		var raw json.RawMessage
		if err := c.do("POST", "/api/v1/observers/"+url.PathEscape(args[0])+"/run", struct{}{}, &raw); err != nil {
			return err
		}
		if *asJSON {
			return printJSON(io.Stdout, raw)
		}
		fmt.Fprintf(io.Stdout, "ran %s\n", args[0])
		return nil
	}
}

func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return localTime(t)
}
