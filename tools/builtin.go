package tools

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/cyan-agent/cyan/packets"
)

// Builtins are the built-in tools of this package; other packages
// register theirs (remember, recall, …) the same way.
type Builtins struct {
	Paths   *Paths
	Sandbox *Sandbox
	Shell   string // "/bin/sh" when empty
	// Scripts runs the natural tools' prompt scripts (speak,
	// system_operation); nil leaves those tools out.
	Scripts Scripts
}

// Tools lists the built-ins.
//
// With no tools.roots nothing on the machine is open to the agent, so the
// file and terminal tools (and system_operation, which plans with them)
// are not offered at all, rather than offered and failing; cyan doctor
// says how to open a folder.
func (b Builtins) Tools() []packets.Tool {
	files := b.Paths != nil && len(b.Paths.Roots()) > 0
	var list []packets.Tool
	if files {
		list = append(list, b.readFile(), b.writeFile(), b.terminal())
	}
	if b.Scripts != nil {
		list = append(list, speak(b.Scripts))
		if files {
			list = append(list, systemOperation(b.Scripts))
		}
	}
	return list
}

// MaxReadBytes bounds what read_file reads of one file.
const MaxReadBytes = 8 << 20

func (b Builtins) readFile() packets.Tool {
	return packets.Tool{ToolSpec: packets.ToolSpec{
		Name:  "read_file",
		Title: "read a file",
		Description: "Read a text file in the folders open to you. path is a full path, or %[path], " +
			"or \"%[path] Line n ~ Line m\" for lines n to m (also start_line / end_line).",
		Parameters: Schema("path", "string", "the file: a full path, %[path] or \"%[path] Line n ~ Line m\"",
			"start_line?", "integer", "first line to read (from 1)", "end_line?", "integer", "last line to read"),
		Kind: packets.ToolProcess, Effects: []string{packets.EffectRead}, PathParams: []string{"path"},
	}, Run: func(ctx context.Context, c *packets.ToolCall) (packets.Result, error) {
		var a struct {
			Path      string `json:"path"`
			StartLine int    `json:"start_line"`
			EndLine   int    `json:"end_line"`
		}
		if err := c.Decode(&a); err != nil {
			return packets.Result{}, err
		}
		ref, err := ParseRef(a.Path)
		if err != nil {
			return packets.Result{}, err
		}
		if a.StartLine > 0 {
			ref.From, ref.To = a.StartLine, max(a.EndLine, a.StartLine)
		}
		f, real, err := b.Paths.OpenRead(ref.Path)
		if err != nil {
			return packets.Result{}, err
		}
		defer f.Close()
		text, err := readLines(io.LimitReader(f, MaxReadBytes), ref)
		if err != nil {
			return packets.Result{}, fmt.Errorf("read %s: %w", real, err)
		}
		if !utf8.ValidString(text) {
			return packets.Result{}, fmt.Errorf("%s is not a text file", real)
		}
		if utf8.RuneCountInString(text) > packets.MaxText {
			text = packets.CutText(text, packets.MaxText-200) +
				fmt.Sprintf("\n[cut: read less at a time, e.g. %%[%s] Line 1 ~ Line 200]", real)
		}
		return packets.Result{OutputText: text}, nil
	}}
}

// readLines returns the lines From..To (all when From is 0).
func readLines(r io.Reader, ref Ref) (string, error) {
	if ref.From == 0 {
		b, err := io.ReadAll(r)
		return string(b), err
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxReadBytes)
	var b strings.Builder
	n := 0
	for sc.Scan() {
		n++
		if n < ref.From {
			continue
		}
		if n > ref.To {
			break
		}
		b.WriteString(sc.Text())
		b.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	if n < ref.From {
		return "", fmt.Errorf("the file has %d lines; line %d does not exist", n, ref.From)
	}
	return b.String(), nil
}

func (b Builtins) writeFile() packets.Tool {
	return packets.Tool{ToolSpec: packets.ToolSpec{
		Name:  "write_file",
		Title: "write a file",
		Description: "Write text to a file in the folders open to you (full path or %[path]); folders are created. " +
			"Read a file before rewriting it. append: true adds to the end instead.",
		Parameters: Schema("path", "string", "the file: a full path or %[path]", "content", "string", "the text to write",
			"append?", "boolean", "add to the end instead of replacing"),
		Kind: packets.ToolProcess, Effects: []string{packets.EffectWrite}, PathParams: []string{"path"},
	}, Run: func(ctx context.Context, c *packets.ToolCall) (packets.Result, error) {
		var a struct {
			Path    string `json:"path"`
			Content string `json:"content"`
			Append  bool   `json:"append"`
		}
		if err := c.Decode(&a); err != nil {
			return packets.Result{}, err
		}
		ref, err := ParseRef(a.Path)
		if err != nil {
			return packets.Result{}, err
		}
		if ref.From != 0 {
			return packets.Result{}, fmt.Errorf("write_file writes a whole file; give %%[%s] without a line range", ref.Path)
		}
		f, real, err := b.Paths.OpenWrite(ref.Path, a.Append)
		if err != nil {
			return packets.Result{}, err
		}
		n, err := io.WriteString(f, a.Content)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return packets.Result{}, fmt.Errorf("write %s: %w", real, err)
		}
		verb := "wrote"
		if a.Append {
			verb = "appended"
		}
		return packets.Result{OutputText: fmt.Sprintf("%s %d bytes to %%[%s]", verb, n, real), OutputFile: []string{real}}, nil
	}}
}

func (b Builtins) terminal() packets.Tool {
	return packets.Tool{ToolSpec: packets.ToolSpec{
		Name:  "terminal",
		Title: "run a terminal command",
		Description: "Run a shell command in your working folder and get its output (head and tail when long). " +
			"It is stopped at the timeout with everything it started; nothing stays in the background.",
		Parameters: Schema("command", "string", "the shell command"),
		Kind:       packets.ToolProcess, Effects: []string{packets.EffectExecute}, CommandParams: []string{"command"},
	}, Run: func(ctx context.Context, c *packets.ToolCall) (packets.Result, error) {
		var a struct {
			Command string `json:"command"`
		}
		if err := c.Decode(&a); err != nil {
			return packets.Result{}, err
		}
		if strings.TrimSpace(a.Command) == "" {
			return packets.Result{}, fmt.Errorf("the command is empty")
		}
		if _, err := SplitCommand(a.Command); err != nil {
			return packets.Result{}, fmt.Errorf("%w: the command cannot be read safely (%v); fix its quoting", ErrDenied, err)
		}
		if what, ok := b.Paths.Mentions(a.Command); ok {
			return packets.Result{}, fmt.Errorf("%w: the command names %s, which tools may never touch", ErrDenied, what)
		}
		roots := b.Paths.Roots()
		if len(roots) == 0 {
			return packets.Result{}, fmt.Errorf("%w: the terminal has no working folder; the owner can list folders in tools.roots", ErrDenied)
		}
		shell := b.Shell
		if shell == "" {
			shell = "/bin/sh"
		}
		res, err := b.Sandbox.Run(ctx, []string{shell, "-c", a.Command}, roots[0], nil)
		if err != nil {
			return packets.Result{}, err
		}
		return packets.Result{OutputText: res.Text()}, nil
	}}
}
