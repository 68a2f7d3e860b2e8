package cmd

import (
	"fmt"
	"github.com/cyan-agent/cyan/api"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"
)

// runObservers: cyan observers ls | run NAME.
func runObservers(io IO, args []string) error {
	fs := newFlags(io, "observers")
	asJSON := fs.Bool("json", false, "print the daemon's JSON answer")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return &usageError{msg: "say what to do: cyan observers ls | run NAME"}
	}
	cfg, err := loadConfig(io)
	if err != nil {
		return err
	}
	c := newClient(cfg)
	switch pos[0] {
	case "ls":
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
		tw.Flush()
		return nil
	case "run":
		if len(pos) != 2 {
			return &usageError{msg: "cyan observers run takes one observer name"}
		}
		if err := c.do("POST", "/api/v1/observers/"+url.PathEscape(pos[1])+"/run", struct{}{}, nil); err != nil {
			return err
		}
		fmt.Fprintf(io.Stdout, "ran %s\n", pos[1])
		return nil
	}
	return &usageError{msg: fmt.Sprintf("unknown verb %q: cyan observers ls | run NAME", pos[0])}
}

func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return localTime(t)
}
