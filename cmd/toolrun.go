package cmd

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"golang.org/x/term"
)

// toolRun is "cyan tool run": the call goes through the daemon's
// permission checks like the model's. One the owner's rules say to confirm
// is parked by the daemon; on a terminal cyan shows the call and asks, and
// a "y" approves it in the same step. Without a terminal (a script, a pipe,
// another program) nothing is approved: the answer names the approval, for
// "cyan approvals allow ID".
func toolRun(io IO, c *client, path string, body map[string]any) error {
	resp, err := c.send("POST", path, body, "application/json")
	if err != nil {
		return err
	}
	raw, err := readAll(resp)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusAccepted {
		return printJSON(io.Stdout, raw)
	}
	var parked struct {
		Tool     string `json:"tool"`
		Rule     string `json:"rule"`
		Approval string `json:"approval"`
		Message  string `json:"message"`
	}
	if err := json.Unmarshal(raw, &parked); err != nil || parked.Approval == "" {
		return printJSON(io.Stdout, raw)
	}
	if !interactive(io) {
		if err := printJSON(io.Stdout, raw); err != nil {
			return err
		}
		return fmt.Errorf("%s waits for your approval (rule %s): run 'cyan approvals allow %s' to run it, or 'cyan approvals deny %s'", parked.Tool, parked.Rule, parked.Approval, parked.Approval)
	}
	args, _ := json.Marshal(body["arguments"])
	fmt.Fprintf(io.Stderr, "%s %s\nYour rule %s asks you to confirm this call. Run it? [y/N] ", parked.Tool, args, parked.Rule)
	line, _ := bufio.NewReader(io.Stdin).ReadString('\n')
	allow := strings.EqualFold(strings.TrimSpace(line), "y") || strings.EqualFold(strings.TrimSpace(line), "yes")
	var ans json.RawMessage
	if err := c.do("POST", "/api/v1/approvals/"+url.PathEscape(parked.Approval), map[string]bool{"allow": allow}, &ans); err != nil {
		return err
	}
	if !allow {
		fmt.Fprintf(io.Stderr, "not run: %s was denied\n", parked.Tool)
		return errors.New("you did not confirm the call; it did not run")
	}
	return printJSON(io.Stdout, ans)
}

func readAll(resp *http.Response) (json.RawMessage, error) {
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("reading the daemon's answer: %w", err)
	}
	return b, nil
}

// interactive reports whether a person sits at the command: its input is a
// terminal.
func interactive(io IO) bool {
	f, ok := io.Stdin.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
