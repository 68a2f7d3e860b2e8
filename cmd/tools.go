package cmd

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"text/tabwriter"

	"github.com/cyan-agent/cyan/api"
)

func toolLs(f *flags) run {
	asJSON := f.json()
	return func(io IO, _ []string) error {
		c, _, err := dial(io)
		if err != nil {
			return err
		}
		var out api.ToolList
		if printed, err := c.list(io, "/api/v1/tools", *asJSON, &out); printed || err != nil {
			return err
		}
		tw := tabwriter.NewWriter(io.Stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tKIND\tSOURCE\tEFFECTS\tOWNER\tOTHERS")
		for _, t := range out.Tools {
			eff := strings.Join(t.Effects, ",")
			if eff == "" {
				eff = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t.Name, t.Kind, t.Source, eff, t.Owner, t.Others)
		}
		tw.Flush()
		for name, st := range out.MCP {
			fmt.Fprintf(io.Stdout, "mcp %s: %s\n", name, st)
		}
		for _, p := range out.Problems {
			fmt.Fprintf(io.Stdout, "not loaded: %s\n", p.Error())
		}
		return nil
	}
}

// callFlags are the flags of tool run and tool check: who makes the call
// and where.
type callFlags struct {
	as, kind, channel *string
}

func defineCallFlags(f *flags, channel bool) callFlags {
	c := callFlags{
		as:   f.String("as", "", "make the call as this `speaker`: a name or id:<bridge>:<user id> (default: you, the owner)"),
		kind: f.String("kind", "private", "the conversation `kind` of --as: private or group"),
	}
	if channel {
		c.channel = f.String("channel", "", "the `channel` the call belongs to (an approval's result is stored there)")
	} else {
		c.channel = new(string)
	}
	return c
}

// callBody checks the call's arguments and makes the request body.
func (c callFlags) body(args []string) (map[string]any, error) {
	argsJSON := "{}"
	if len(args) == 2 {
		argsJSON = args[1]
	}
	if !json.Valid([]byte(argsJSON)) {
		return nil, badInput("the arguments %q are not JSON; write them as an object, e.g. '{\"path\": \"/tmp/a.txt\"}'", argsJSON)
	}
	return map[string]any{"arguments": json.RawMessage(argsJSON), "as": *c.as, "kind": *c.kind, "channel": *c.channel}, nil
}

func toolCheck(f *flags) run {
	cf := defineCallFlags(f, false)
	asJSON := f.json()
	return func(io IO, args []string) error {
		body, err := cf.body(args)
		if err != nil {
			return err
		}
		c, _, err := dial(io)
		if err != nil {
			return err
		}
		var raw json.RawMessage
		if err := c.do("POST", "/api/v1/tools/"+url.PathEscape(args[0])+"/check", body, &raw); err != nil {
			return err
		}
		if *asJSON {
			return printJSON(io.Stdout, raw)
		}
		var v struct {
			Decision string `json:"decision"`
			Rule     string `json:"rule"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			return err
		}
		fmt.Fprintf(io.Stdout, "%s (rule %s)\n", v.Decision, orDash(v.Rule))
		return nil
	}
}

func approvalsLs(f *flags) run {
	asJSON := f.json()
	return func(io IO, _ []string) error {
		c, _, err := dial(io)
		if err != nil {
			return err
		}
		var out api.ApprovalList
		if printed, err := c.list(io, "/api/v1/approvals", *asJSON, &out); printed || err != nil {
			return err
		}
		if len(out.Approvals) == 0 {
			fmt.Fprintln(io.Stdout, "no calls are waiting for your approval")
			return nil
		}
		for _, a := range out.Approvals {
			// Exactly what will run: a control or bidi character in the
			// arguments is shown as its escape, never acted on (showable).
			fmt.Fprintf(io.Stdout, "%s  %s %s\n    asked in %q by %s; expires %s\n", showable(a.ID), showable(a.Tool), showable(string(a.Arguments)),
				a.Caller.Channel, orDash(showable(a.Caller.Speaker)), localTime(a.Expires))
			if strings.HasPrefix(a.Rule, "audience: ") { // where its result would be posted, and who asked, by id
				fmt.Fprintf(io.Stdout, "    speaker id %q; %s\n", showable(a.Caller.SpeakerID), showable(a.Rule))
			}
		}
		fmt.Fprintln(io.Stdout, "\nAnswer with: cyan approvals allow ID   or   cyan approvals deny ID")
		return nil
	}
}

// approvalsAnswer is "cyan approvals allow ID" (allow) or "deny ID".
func approvalsAnswer(allow bool) func(f *flags) run {
	return func(f *flags) run {
		asJSON := f.json()
		return func(io IO, args []string) error {
			c, _, err := dial(io)
			if err != nil {
				return err
			}
			return answerApproval(io, c, args[0], allow, *asJSON)
		}
	}
}
