package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cyan-agent/cyan/packets"
)

// OpenName is the tool that opens any %[...] reference the prompt shows.
const OpenName = "open"

// Opener opens the references of one kind: ref is the text inside
// "%[...]" ("history/home/2026-11-23", "theory On sleep"), location what
// follows it ("message 4 ~ message 9", ""), r the caller as the knowledge
// it may see. A reference it may not see is answered as missing, so its
// existence does not leak.
type Opener func(ctx context.Context, r packets.Reader, ref, location string) (string, error)

// OpenTool is the open tool (SPEC §2: every %[...] the prompt shows can be
// opened). openers maps the prefix of a reference's text to its opener
// ("history/", "event ", "theory ", "object "); any other reference is a
// file, read through read_file with the caller's own rights — so a
// stranger who may not read files opens none, and every opener checks the
// caller's infos where the data is read. Its results are shown like a
// file read: until the next user message.
func (r *Registry) OpenTool(openers map[string]Opener) packets.Tool {
	return packets.Tool{ToolSpec: packets.ToolSpec{
		Name:  OpenName,
		Title: "open a reference",
		Description: "Open a %[...] reference you see in your prompt: a range of the history (%[history/<channel>/<date>] message n ~ message m), " +
			"an event record (%[event <label>]: its summary and the history ranges of its messages), a theory (%[theory <title>]), a person or thing (%[object <name>]) or a file (%[path], %[path] Line n ~ Line m). " +
			"The result is shown until the next user message; keep a file with context_operation \"keep %[path] - what it is\".",
		Parameters: Schema("ref", "string", "the reference exactly as shown, e.g. \"%[history/home/2026-11-23] message 4 ~ message 9\""),
		// No effect of its own: each reference is read by its opener, which
		// checks the caller's rights (a file through read_file's packets.EffectRead).
		Kind: packets.ToolProcess, Effects: []string{}, Source: SourceBuiltin, Transient: true,
	}, Run: func(ctx context.Context, c *packets.ToolCall) (packets.Result, error) {
		var a struct {
			Ref string `json:"ref"`
		}
		if err := c.Decode(&a); err != nil {
			return packets.Result{}, err
		}
		ref, loc, err := splitRef(a.Ref)
		if err != nil {
			return packets.Result{}, err
		}
		for prefix, open := range openers {
			if strings.HasPrefix(ref, prefix) {
				out, err := open(ctx, c.Reader(), ref, loc)
				return packets.Result{OutputText: out}, err
			}
		}
		args, _ := json.Marshal(map[string]string{"path": strings.TrimSpace(a.Ref)})
		o := r.callAs(ctx, c.Reader(), c.Caller, "read_file", args, c.Confirmed)
		switch {
		case o.Decision == packets.Deny && o.Rule == "unknown tool":
			return packets.Result{}, fmt.Errorf("no folder is open to you (tools.roots is empty); nothing was read")
		case o.Decision == packets.Deny:
			return packets.Result{}, fmt.Errorf("files are not open to you here (%s); nothing was read", o.Rule)
		case o.Decision == packets.Confirm:
			return packets.Result{}, fmt.Errorf("reading that file waits for the owner's approval (approval %s)", o.Approval)
		case o.Error != "":
			return packets.Result{}, errors.New(o.Error)
		}
		return o.Result, nil
	}}
}

// splitRef reads "%[text] location" (the brackets may nest once, as in a
// path with "]"): the text inside and what follows.
func splitRef(s string) (ref, location string, err error) {
	s = strings.TrimSpace(s)
	body, ok := strings.CutPrefix(s, "%[")
	if !ok {
		return "", "", errors.New(`a reference looks like %[...]: copy it as your prompt shows it`)
	}
	end := strings.LastIndex(body, "]")
	if end <= 0 {
		return "", "", errors.New(`the reference has no closing "]"`)
	}
	return strings.TrimSpace(body[:end]), strings.TrimSpace(body[end+1:]), nil
}
