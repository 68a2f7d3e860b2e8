package cmd

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"
)

// runTool is "cyan tool ls | run | check".
func runTool(io IO, args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") && args[0] != "-h" && args[0] != "--help" {
		return &usageError{msg: "say what to do: cyan tool ls [--json] | run [--as SPEAKER] [--channel C] NAME 'ARGS_JSON' | check [--as SPEAKER] NAME 'ARGS_JSON'"}
	}
	switch args[0] {
	case "ls":
		return toolLs(io, args[1:])
	case "run", "check":
		return toolRunCheck(io, args[0], args[1:])
	case "-h", "--help":
		fs := newFlags(io, "tool")
		fs.Usage()
		return nil
	}
	return &usageError{msg: fmt.Sprintf("unknown verb %q; use ls, run or check", args[0])}
}

func toolLs(io IO, args []string) error {
	fs := newFlags(io, "tool")
	asJSON := fs.Bool("json", false, "print the daemon's JSON answer")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	cfg, err := loadConfig(io)
	if err != nil {
		return err
	}
	var out struct {
		Tools []struct {
			Name    string   `json:"name"`
			Kind    string   `json:"kind"`
			Source  string   `json:"source"`
			Effects []string `json:"effects"`
			Owner   string   `json:"owner"`
			Others  string   `json:"others"`
		} `json:"tools"`
		Problems []struct {
			File  string `json:"file"`
			Line  int    `json:"line"`
			Error string `json:"error"`
		} `json:"problems"`
		MCP map[string]string `json:"mcp"`
	}
	var raw json.RawMessage
	if err := newClient(cfg).do("GET", "/api/v1/tools", nil, &raw); err != nil {
		return err
	}
	if *asJSON {
		return printJSON(io.Stdout, raw)
	}
	if err := json.Unmarshal(raw, &out); err != nil {
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
		loc := p.File
		if p.Line > 0 {
			loc = fmt.Sprintf("%s:%d", p.File, p.Line)
		}
		fmt.Fprintf(io.Stdout, "not loaded: %s: %s\n", loc, p.Error)
	}
	return nil
}

func toolRunCheck(io IO, verb string, args []string) error {
	fs := newFlags(io, "tool")
	as := fs.String("as", "", "run as this `speaker`: a name or id:<platform id> (default: you, the owner)")
	kind := fs.String("kind", "private", "the conversation `kind` of --as: private or group")
	channel := fs.String("channel", "", "the `channel` the call belongs to (approval results are stored there)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 1 || len(pos) > 2 {
		return &usageError{msg: fmt.Sprintf("cyan tool %s needs NAME and, optionally, 'ARGS_JSON'", verb)}
	}
	argsJSON := "{}"
	if len(pos) == 2 {
		argsJSON = pos[1]
	}
	if !json.Valid([]byte(argsJSON)) {
		return &usageError{msg: fmt.Sprintf("the arguments %q are not JSON; write them as an object, e.g. '{\"path\": \"/tmp/a.txt\"}'", argsJSON)}
	}
	cfg, err := loadConfig(io)
	if err != nil {
		return err
	}
	body := map[string]any{"arguments": json.RawMessage(argsJSON), "as": *as, "kind": *kind, "channel": *channel}
	c := newClient(cfg)
	path := "/api/v1/tools/" + url.PathEscape(pos[0]) + "/" + verb
	if verb == "run" {
		return toolRun(io, c, path, body)
	}
	var raw json.RawMessage
	if err := c.do("POST", path, body, &raw); err != nil {
		return err
	}
	return printJSON(io.Stdout, raw)
}

// runApprovals is "cyan approvals [allow|deny ID]".
func runApprovals(io IO, args []string) error {
	fs := newFlags(io, "approvals")
	asJSON := fs.Bool("json", false, "print the daemon's JSON answer")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(io)
	if err != nil {
		return err
	}
	c := newClient(cfg)
	if len(pos) > 0 {
		if len(pos) != 2 || (pos[0] != "allow" && pos[0] != "deny") {
			return &usageError{msg: "cyan approvals lists the pending calls; cyan approvals allow ID or deny ID answers one"}
		}
		var raw json.RawMessage
		if err := c.do("POST", "/api/v1/approvals/"+url.PathEscape(pos[1]), map[string]bool{"allow": pos[0] == "allow"}, &raw); err != nil {
			return err
		}
		return printJSON(io.Stdout, raw)
	}
	var raw json.RawMessage
	if err := c.do("GET", "/api/v1/approvals", nil, &raw); err != nil {
		return err
	}
	if *asJSON {
		return printJSON(io.Stdout, raw)
	}
	var out struct {
		Approvals []struct {
			ID        string          `json:"id"`
			Tool      string          `json:"tool"`
			Arguments json.RawMessage `json:"arguments"`
			Caller    struct {
				Channel, Speaker string
			} `json:"caller"`
			Expires time.Time `json:"expires"`
		} `json:"approvals"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return err
	}
	if len(out.Approvals) == 0 {
		fmt.Fprintln(io.Stdout, "no calls are waiting for your approval")
		return nil
	}
	for _, a := range out.Approvals {
		fmt.Fprintf(io.Stdout, "%s  %s %s\n    asked in %q by %s; expires %s\n", a.ID, a.Tool, a.Arguments, a.Caller.Channel, orDash(a.Caller.Speaker), localTime(a.Expires))
	}
	fmt.Fprintln(io.Stdout, "\nAnswer with: cyan approvals allow ID   or   cyan approvals deny ID")
	return nil
}
