package cmd

import (
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/cyan-agent/cyan/api"
	"github.com/cyan-agent/cyan/turn"

	"go.yaml.in/yaml/v3"
)

func historyLs(f *flags) run {
	channel := f.String("channel", defaultChannel, "the `channel` to show")
	limit := f.limit(50, 1000, "show the newest `N` messages")
	all := f.Bool("all", false, "include tool results and silent turns")
	asJSON := f.json()
	return func(io IO, _ []string) error {
		c, _, err := dial(io)
		if err != nil {
			return err
		}
		var out api.MessageList
		allFlag := ""
		if *all {
			allFlag = "1"
		}
		if printed, err := c.list(io, "/api/v1/messages"+query("channel", *channel, "limit", strconv.Itoa(*limit), "all", allFlag), *asJSON, &out); printed || err != nil {
			return err
		}
		if len(out.Messages) == 0 {
			fmt.Fprintf(io.Stdout, "channel %q has no messages\n", *channel)
		}
		for _, m := range out.Messages {
			who := m.User
			switch {
			case m.Role == "tool":
				who = "#" + m.ToolName
			case m.Empty:
				m.Text = "(chose not to reply)"
			}
			fmt.Fprintf(io.Stdout, "[%s] %s: %s\n", localTime(m.Time), who, indentRest(m.Text, "    "))
		}
		return nil
	}
}

func indentRest(s, pad string) string { return strings.ReplaceAll(s, "\n", "\n"+pad) }

// printTrace shows a turn: the budget table, the context, the exact
// provider messages and each step.
func printTrace(io IO, t *turn.Trace) {
	w := io.Stdout
	fmt.Fprintf(w, "Turn of message %s in %q at %s (model %s)\n", t.MessageID, t.Channel, localTime(t.Time), orDash(t.Model))
	if t.Error != "" {
		fmt.Fprintf(w, "Error: %s\n", t.Error)
	}
	p := t.Packet
	if p == nil {
		return
	}
	fmt.Fprintf(w, "\nPacket: %d tokens (system %d, context %d), assembled in %dµs\n", p.Tokens, p.SystemTokens, p.Context.Tokens, p.AssemblyMicros)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SECTION\tTOKENS\tBUDGET\tNOTE")
	for _, s := range p.Sections {
		note := s.Note
		if s.Clipped {
			note = strings.TrimPrefix(note+"; clipped", "; ")
		}
		if s.Error != "" {
			note = strings.TrimPrefix(note+"; error: "+s.Error, "; ")
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", s.Slot, s.Tokens, s.Budget, note)
	}
	fmt.Fprintf(tw, "context\t%d\t%d\t%d messages (at most %d), %d compressed, %d dropped\n", p.Context.Tokens, p.Context.Budget,
		len(p.Context.Included), p.Context.MaxCount, len(p.Context.Compressed), len(p.Context.Dropped))
	tw.Flush()
	printLore(w, p)
	for _, c := range p.Context.Compressed {
		how := "compressed now"
		if c.Cached {
			how = "compressed earlier"
		}
		fmt.Fprintf(w, "  compressed %s: %d → %d tokens (%s, generate trace %s)\n", c.ID, c.Tokens, c.CompressedTokens, how, orDash(c.TraceID))
	}
	for _, d := range p.Context.Dropped {
		fmt.Fprintf(w, "  dropped %s: %s\n", d.ID, d.Reason)
	}
	if p.Context.Note != "" {
		fmt.Fprintf(w, "  note: %s\n", p.Context.Note)
	}
	if len(p.Tools) > 0 {
		var names []string
		for _, tl := range p.Tools {
			names = append(names, tl.Name)
		}
		fmt.Fprintf(w, "Tools offered: %s\n", strings.Join(names, ", "))
	}
	fmt.Fprintln(w, "\nMessages sent to the model:")
	for _, m := range p.Messages {
		fmt.Fprintf(w, "--- %s ---\n%s\n", m.Role, m.Content)
	}
	for _, st := range t.Steps {
		fmt.Fprintf(w, "\nStep %d (%d ms, %d in / %d out tokens, finish %s)\n", st.Step, st.Millis, st.Usage.InputTokens, st.Usage.OutputTokens, orDash(st.FinishReason))
		if st.Error != "" {
			fmt.Fprintf(w, "  error: %s\n", st.Error)
		}
		if st.Reasoning != "" {
			fmt.Fprintf(w, "  reasoning: %s\n", indentRest(st.Reasoning, "    "))
		}
		fmt.Fprintf(w, "  output: %s\n", indentRest(st.Output, "    "))
		for i, c := range st.ToolCalls {
			res := ""
			if i < len(st.Results) {
				res = st.Results[i].Text
			}
			fmt.Fprintf(w, "  call %s(%s) → %s\n", c.Name, c.Arguments, indentRest(res, "    "))
		}
		if st.Note != "" {
			fmt.Fprintf(w, "  note: %s\n", st.Note)
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func configCheck(f *flags) run {
	asJSON := f.json()
	return func(io IO, _ []string) error {
		cfg, err := loadConfig(io)
		if err != nil {
			return err
		}
		out, err := cfg.YAML()
		if err != nil {
			return err
		}
		file := cfg.File
		if *asJSON {
			var m map[string]any
			if err := yaml.Unmarshal([]byte(out), &m); err != nil {
				return err
			}
			return printJSON(io.Stdout, map[string]any{"valid": true, "file": file, "config": m})
		}
		if file == "" {
			file = "none (built-in defaults and the environment)"
		}
		owner := checkOwners(cfg, cfg.Bridges.Names())
		fmt.Fprintf(io.Stdout, "# configuration is valid\n# file: %s\n# %s\n", file, owner.msg)
		for _, w := range cfg.OwnerWarnings() {
			fmt.Fprintf(io.Stdout, "# warning: %s\n", w)
		}
		fmt.Fprintf(io.Stdout, "%s", out)
		return nil
	}
}
