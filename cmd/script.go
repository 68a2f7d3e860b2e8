package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/generate"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/mainvirtual"
	"github.com/cyan-agent/cyan/script"
)

const scriptUsage = `Usage: cyan script run [--input JSON] [--json] [--trace] [--debug] FILE
       cyan script check FILE...

run    runs a prompt script (*.ai.yaml) against the configured LLM and prints
       its result; it exits 1 with the error when the output is still invalid
       after the last attempt. FILE may also name a script of the persona's
       scripts/ folder or a built-in one (e.g. "compress").
check  validates scripts without calling a model; errors name the file,
       line and column.
`

func runScript(io IO, args []string) error {
	if len(args) == 0 {
		return &usageError{msg: "name a verb: cyan script run FILE, or cyan script check FILE"}
	}
	switch args[0] {
	case "run":
		return scriptRun(io, args[1:])
	case "check":
		return scriptCheck(io, args[1:])
	case "-h", "--help", "help":
		fmt.Fprint(io.Stderr, scriptUsage)
		return flag.ErrHelp
	}
	return &usageError{msg: fmt.Sprintf("unknown verb %q; the verbs are run and check", args[0])}
}

// verbFlags is the flag set of "cyan script <verb>".
func verbFlags(io IO, verb string) *flag.FlagSet {
	fs := flag.NewFlagSet("script "+verb, flag.ContinueOnError)
	fs.SetOutput(io.Stderr)
	fs.Usage = func() {
		fmt.Fprint(io.Stderr, scriptUsage)
		fmt.Fprintln(io.Stderr, "\nFlags:")
		fs.PrintDefaults()
	}
	return fs
}

// personaDir is the configured persona folder, "" when there is none or
// the configuration does not load (check works without one).
func personaDir(io IO) string {
	cfg, err := loadConfig(io)
	if err != nil {
		return ""
	}
	return cfg.Persona
}

// loadScript reads FILE, or, when no such file exists and the argument is
// a plain name, the persona's or the built-in script of that name.
func loadScript(arg, persona string) (*script.Script, error) {
	if _, err := os.Stat(arg); err != nil && errors.Is(err, os.ErrNotExist) &&
		!strings.ContainsAny(arg, `/\`) && !strings.HasSuffix(arg, ".yaml") {
		s, ferr := script.Find(arg, persona)
		if ferr == nil || !errors.Is(ferr, script.ErrNotFound) {
			return s, ferr
		}
		return nil, fmt.Errorf("no file %s, and no script of that name (%v)", arg, ferr)
	}
	return script.LoadFile(arg, persona)
}

func scriptRun(io IO, args []string) error {
	fs := verbFlags(io, "run")
	input := fs.String("input", "", "the inputs, a JSON `object` (\"-\" reads it from stdin)")
	asJSON := fs.Bool("json", false, "print the result as JSON: value, vars (every site's value), trace ids")
	showTrace := fs.Bool("trace", false, "print every generate trace (on stderr; inside the JSON with --json)")
	debug := fs.Bool("debug", false, "log the rendered prompt, each raw answer and ignored hints on stderr")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return &usageError{msg: "name one script: cyan script run [flags] FILE"}
	}
	in, err := readInputs(io, *input)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(io)
	if err != nil {
		return err
	}
	s, err := loadScript(pos[0], cfg.Persona)
	if err != nil {
		return err
	}
	for _, w := range s.Warnings {
		fmt.Fprintln(io.Stderr, "warning: "+w)
	}
	gen, err := newGenerator(io, cfg, *debug)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, runErr := s.Run(ctx, gen, in, script.RunOptions{Debug: *debug})
	var traces []*generate.Trace
	if res != nil {
		traces = res.Traces
	}
	var ge *generate.Error
	if errors.As(runErr, &ge) && ge.Trace != nil {
		traces = append(traces, ge.Trace)
	}
	if *asJSON {
		out := map[string]any{}
		if runErr == nil {
			out["value"], out["vars"], out["trace_ids"] = res.Value, res.Vars, res.TraceIDs
		} else {
			out["error"] = runErr.Error()
		}
		if *showTrace {
			out["traces"] = traces
		}
		if err := printJSON(io.Stdout, out); err != nil {
			return err
		}
		if runErr != nil {
			return fmt.Errorf("the script failed; see the JSON output")
		}
		return nil
	}
	if *showTrace {
		for _, t := range traces {
			printGenTrace(io.Stderr, t)
			fmt.Fprintln(io.Stderr)
		}
	}
	if runErr != nil {
		return runErr
	}
	if text, ok := res.Value.(string); ok {
		fmt.Fprintln(io.Stdout, text)
		return nil
	}
	return printJSON(io.Stdout, res.Value)
}

// readInputs reads --input: a JSON object, from the flag or stdin.
func readInputs(io IO, arg string) (map[string]any, error) {
	if arg == "" {
		return map[string]any{}, nil
	}
	data := []byte(arg)
	if arg == "-" {
		b, err := readAllLimited(io.Stdin)
		if err != nil {
			return nil, fmt.Errorf("read the inputs from stdin: %w", err)
		}
		data = b
	}
	var in map[string]any
	if err := json.Unmarshal(data, &in); err != nil || in == nil {
		return nil, &usageError{msg: fmt.Sprintf("--input must be a JSON object such as '{\"text\": \"…\"}' (%v)", err)}
	}
	return in, nil
}

func readAllLimited(r io.Reader) ([]byte, error) {
	if r == nil {
		return nil, errors.New("no stdin")
	}
	b, err := io.ReadAll(io.LimitReader(r, 16<<20))
	return b, err
}

// newGenerator builds a generator for the configured LLM. It keeps no
// traces: the data dir belongs to the daemon; --trace prints them.
func newGenerator(io IO, cfg *config.Config, debug bool) (*generate.Generator, error) {
	log := slog.New(slog.DiscardHandler)
	if debug {
		log = slog.New(slog.NewTextHandler(io.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	client, err := llm.New(llm.Options{
		Provider: cfg.LLM.Provider, BaseURL: cfg.LLM.BaseURL, Model: cfg.LLM.Model, APIKey: cfg.LLM.APIKey,
		Timeout: cfg.LLM.TimeoutDuration(), MaxRetries: cfg.LLM.MaxRetries, Logger: log,
	})
	if err != nil {
		return nil, err
	}
	return generate.New(generate.Options{LLM: client, Count: new(mainvirtual.TokenCounter).Count, Logger: log})
}

func scriptCheck(io IO, args []string) error {
	fs := verbFlags(io, "check")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return &usageError{msg: "name the script files to check: cyan script check FILE..."}
	}
	persona := personaDir(io)
	failed := 0
	for _, f := range pos {
		s, err := loadScript(f, persona)
		if err != nil {
			failed++
			for _, line := range strings.Split(err.Error(), "\n") {
				fmt.Fprintln(io.Stderr, line)
			}
			continue
		}
		for _, w := range s.Warnings {
			fmt.Fprintln(io.Stderr, "warning: "+w)
		}
		fmt.Fprintf(io.Stdout, "%s: ok — %s\n", f, describeScript(s))
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d script(s) have errors", failed, len(pos))
	}
	return nil
}

// describeScript is a one-line account of a script.
func describeScript(s *script.Script) string {
	var parts []string
	parts = append(parts, "script "+s.Name)
	var ins []string
	for _, in := range s.Inputs {
		n := in.Name
		if in.Required && !in.HasDefault {
			n += "*"
		}
		ins = append(ins, n)
	}
	if len(ins) > 0 {
		parts = append(parts, "inputs "+strings.Join(ins, ", "))
	}
	parts = append(parts, "sites "+strings.Join(s.Sites(), ", "))
	if s.Output != nil {
		parts = append(parts, "output checked")
	}
	if len(s.Files) > 1 {
		var ext []string
		for _, f := range s.Files[1:] {
			ext = append(ext, filepath.Base(f))
		}
		parts = append(parts, "extends "+strings.Join(ext, " → "))
	}
	return strings.Join(parts, "; ")
}
