package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/generate"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/mainvirtual"
	"github.com/cyan-agent/cyan/script"
)

const scriptRunMore = `FILE may also name a script of the persona's scripts/ folder or a built-in
one (e.g. "compress"; 'cyan script ls' lists them). It calls the configured
model directly (no daemon needed) and exits 1 with the error when the output
is still invalid after the last attempt.`

// scriptLs lists the scripts a name can resolve to: the built-in ones and
// the persona's own (which override a built-in one of the same name).
func scriptLs(f *flags) run {
	asJSON := f.json()
	return func(io IO, _ []string) error {
		cfg, err := loadConfig(io)
		if err != nil {
			return err
		}
		gen, err := newGenerator(io, cfg, false)
		if err != nil {
			return err
		}
		lib, err := script.NewLibrary(script.LibraryOptions{Generator: gen, PersonaDir: func() string { return cfg.Persona }})
		if err != nil {
			return err
		}
		list := lib.List()
		if *asJSON {
			return printJSON(io.Stdout, map[string]any{"scripts": list})
		}
		tw := tabwriter.NewWriter(io.Stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tORIGIN\tTITLE")
		for _, e := range list {
			title := e.Title
			if e.Error != "" {
				title = "does not load: " + e.Error
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", e.Name, e.Origin, oneLine(title))
		}
		return tw.Flush()
	}
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

func scriptRun(f *flags) run {
	input := f.String("input", "", "the inputs, a JSON `object` (\"-\" reads it from stdin)")
	asJSON := f.json()
	showTrace := f.Bool("trace", false, "print every generate trace (on stderr; inside the JSON with --json)")
	debug := f.Bool("debug", false, "log the rendered prompt, each raw answer and ignored hints on stderr")
	return func(io IO, pos []string) error {
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
			return &inputError{err}
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
		if _, ok := errors.AsType[*script.InputError](runErr); ok {
			runErr = &inputError{runErr} // nothing was asked: the inputs were wrong
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
			if _, ok := runErr.(*inputError); ok {
				return runErr
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
		Timeout: cfg.LLM.TimeoutDuration(), MaxRetries: cfg.LLM.Retries(), Logger: log,
	})
	if err != nil {
		return nil, err
	}
	return generate.New(generate.Options{LLM: client, Count: new(mainvirtual.TokenCounter).Count, Logger: log})
}

func scriptCheck(f *flags) run {
	asJSON := f.json()
	return func(io IO, pos []string) error {
		persona := personaDir(io)
		type checked struct {
			File        string   `json:"file"`
			OK          bool     `json:"ok"`
			Description string   `json:"description,omitempty"`
			Error       string   `json:"error,omitempty"`
			Warnings    []string `json:"warnings,omitempty"`
		}
		var all []checked
		failed := 0
		for _, f := range pos {
			s, err := loadScript(f, persona)
			if err != nil {
				failed++
				all = append(all, checked{File: f, Error: err.Error()})
				if !*asJSON {
					for _, line := range strings.Split(err.Error(), "\n") {
						fmt.Fprintln(io.Stderr, line)
					}
				}
				continue
			}
			all = append(all, checked{File: f, OK: true, Description: describeScript(s), Warnings: s.Warnings})
			if !*asJSON {
				for _, w := range s.Warnings {
					fmt.Fprintln(io.Stderr, "warning: "+w)
				}
				fmt.Fprintf(io.Stdout, "%s: ok — %s\n", f, describeScript(s))
			}
		}
		if *asJSON {
			if err := printJSON(io.Stdout, map[string]any{"scripts": all}); err != nil {
				return err
			}
		}
		if failed > 0 {
			return fmt.Errorf("%d of %d script(s) have errors", failed, len(pos))
		}
		return nil
	}
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
