package cmd

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

const toolRunMore = `A call the owner's rules say to confirm is parked: on a terminal cyan shows it
and asks [y/N], and "y" runs it in the same step; without a terminal (a
script, a pipe) nothing is approved and the answer names the approval for
'cyan approvals allow ID'. It prints the tool's output, and exits 1 when the
call was refused, is still waiting, or the tool failed.`

func toolRunCmd(f *flags) run {
	cf := defineCallFlags(f, true)
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
		return toolRun(io, c, "/api/v1/tools/"+url.PathEscape(args[0])+"/run", body, *asJSON)
	}
}

// outcome is a call's outcome as the daemon answers it.
type outcome struct {
	Tool     string `json:"tool"`
	Decision string `json:"decision"`
	Rule     string `json:"rule"`
	Result   struct {
		OutputText string   `json:"output_text"`
		OutputFile []string `json:"output_file"`
	} `json:"result"`
	Error    string `json:"error"`
	Approval string `json:"approval"`
	Message  string `json:"message"`
}

// toolRun is "cyan tool run": the call goes through the daemon's
// permission checks like the model's. One the owner's rules say to confirm
// is parked by the daemon; on a terminal cyan shows the call and asks, and
// a "y" approves it in the same step. Without a terminal (a script, a pipe,
// another program) nothing is approved: the answer names the approval, for
// "cyan approvals allow ID".
func toolRun(io IO, c *client, path string, body map[string]any, asJSON bool) error {
	resp, err := c.send("POST", path, body, "application/json")
	if err != nil {
		return err
	}
	raw, err := readAll(resp)
	if err != nil {
		return err
	}
	var o outcome
	if err := json.Unmarshal(raw, &o); err != nil {
		return fmt.Errorf("unreadable answer from the daemon: %w", err)
	}
	if resp.StatusCode != http.StatusAccepted || o.Approval == "" {
		return showOutcome(io, raw, o, asJSON)
	}
	if !isTerminal(io.Stdin) {
		if asJSON {
			if err := printJSON(io.Stdout, raw); err != nil {
				return err
			}
		}
		return fmt.Errorf("%s waits for your approval (rule %s): run 'cyan approvals allow %s' to run it, or 'cyan approvals deny %s'", o.Tool, o.Rule, o.Approval, o.Approval)
	}
	args, _ := json.Marshal(body["arguments"])
	fmt.Fprintf(io.Stderr, "%s %s\nYour rule %s asks you to confirm this call. Run it? [y/N] ", o.Tool, args, o.Rule)
	line, _ := bufio.NewReader(io.Stdin).ReadString('\n')
	allow := strings.EqualFold(strings.TrimSpace(line), "y") || strings.EqualFold(strings.TrimSpace(line), "yes")
	if err := answerApproval(io, c, o.Approval, allow, asJSON); err != nil {
		return err
	}
	if !allow {
		return errors.New("you did not confirm the call; it did not run")
	}
	return nil
}

// answerApproval answers a parked call and shows what became of it; a
// call that ran and failed is an error.
func answerApproval(io IO, c *client, id string, allow, asJSON bool) error {
	var raw json.RawMessage
	if err := c.do("POST", "/api/v1/approvals/"+url.PathEscape(id), map[string]bool{"allow": allow}, &raw); err != nil {
		return err
	}
	var ans struct {
		Allowed bool    `json:"allowed"`
		Outcome outcome `json:"outcome"`
	}
	if err := json.Unmarshal(raw, &ans); err != nil {
		return fmt.Errorf("unreadable answer from the daemon: %w", err)
	}
	if !ans.Allowed {
		if asJSON {
			return printJSON(io.Stdout, raw)
		}
		fmt.Fprintf(io.Stdout, "denied: %s did not run\n", orDash(ans.Outcome.Tool))
		return nil
	}
	return showOutcome(io, raw, ans.Outcome, asJSON)
}

// showOutcome prints a call's result (or raw, with --json) and says why
// when it did not run or failed.
func showOutcome(io IO, raw json.RawMessage, o outcome, asJSON bool) error {
	if asJSON {
		if err := printJSON(io.Stdout, raw); err != nil {
			return err
		}
	}
	switch {
	case o.Decision == "deny":
		return fmt.Errorf("%s was refused by the rule %s; it did not run", o.Tool, orDash(o.Rule))
	case o.Decision == "confirm":
		return fmt.Errorf("%s waits for your approval: %s", o.Tool, o.Message)
	case o.Error != "":
		return fmt.Errorf("%s failed: %s", o.Tool, o.Error)
	}
	if asJSON {
		return nil
	}
	if o.Result.OutputText != "" {
		fmt.Fprintln(io.Stdout, strings.TrimRight(o.Result.OutputText, "\n"))
	}
	for _, f := range o.Result.OutputFile {
		if f != "" {
			fmt.Fprintf(io.Stdout, "file: %s\n", f)
		}
	}
	return nil
}

func readAll(resp *http.Response) (json.RawMessage, error) {
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("reading the daemon's answer: %w", err)
	}
	return b, nil
}
