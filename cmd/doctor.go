package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/persona"
	"github.com/cyan-agent/cyan/persona/lorebook"
	"github.com/cyan-agent/cyan/persona/vrm"
	"github.com/cyan-agent/cyan/store"
)

// check is one line of the doctor's report.
type check struct {
	name string
	ok   bool
	warn bool
	msg  string
	fix  string
}

func doctorCmd(f *flags) run {
	timeout := f.Duration("timeout", 20*time.Second, "how long to wait for the LLM and the voice to answer")
	asJSON := f.json()
	return func(io IO, _ []string) error {
		var checks []check
		cfg, err := loadConfig(io)
		if err != nil {
			checks = append(checks, check{name: "config", msg: err.Error(),
				fix: "correct the key the message names; 'cyan config check' validates again"})
			if err := report(io, checks, *asJSON); err != nil {
				return err
			}
			return errors.New("the configuration has errors")
		}
		src := cfg.File
		if src == "" {
			src = "built-in defaults and environment"
		}
		checks = append(checks, check{name: "config", ok: true, msg: "valid (" + src + ")"})
		checks = append(checks, checkDataDir(cfg), checkDatabase(cfg))
		checks = append(checks, checkParts(cfg)...)
		checks = append(checks, checkPersona(cfg), checkFiles(cfg), checkSandbox(cfg), checkUser(), checkOwners(cfg, cfg.Bridges.Names()))
		seen, known, why := ownerSightings(cfg)
		checks = append(checks, checkOwnerIDs(cfg, seen, known, why))
		checks = append(checks, checkLLM(cfg, *timeout)...)
		checks = append(checks, checkEmbed(cfg, *timeout))
		checks = append(checks, checkVoice(cfg, *timeout))
		checks = append(checks, checkVoiceEncoder(cfg))
		checks = append(checks, checkBridges(cfg, *timeout)...)
		if err := report(io, checks, *asJSON); err != nil {
			return err
		}
		for _, c := range checks {
			if !c.ok && !c.warn {
				return errors.New("some checks failed; see the fixes above")
			}
		}
		return nil
	}
}

// report prints the checks: a line each with its fix, or one JSON
// document.
func report(io IO, checks []check, asJSON bool) error {
	if asJSON {
		type line struct {
			Name    string `json:"name"`
			State   string `json:"state"` // ok, warn or fail
			Message string `json:"message"`
			Fix     string `json:"fix,omitempty"`
		}
		out := struct {
			OK     bool   `json:"ok"`
			Checks []line `json:"checks"`
		}{OK: true}
		for _, c := range checks {
			out.Checks = append(out.Checks, line{Name: c.name, State: c.state(), Message: c.msg, Fix: c.fix})
			if c.state() == "fail" {
				out.OK = false
			}
		}
		return printJSON(io.Stdout, out)
	}
	for _, c := range checks {
		mark := "ok  "
		switch c.state() {
		case "warn":
			mark = "warn"
		case "fail":
			mark = "FAIL"
		}
		fmt.Fprintf(io.Stdout, "[%s] %-9s %s\n", mark, c.name, c.msg)
		if c.fix != "" {
			fmt.Fprintf(io.Stdout, "           fix: %s\n", c.fix)
		}
	}
	return nil
}

func (c check) state() string {
	switch {
	case c.warn:
		return "warn"
	case !c.ok:
		return "fail"
	}
	return "ok"
}

// checkDataDir says whether the data dir can be written, and whether a
// daemon holds it now.
func checkDataDir(cfg *config.Config) check {
	c := check{name: "data dir"}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		c.msg = fmt.Sprintf("%s cannot be created: %v", cfg.DataDir, err)
		c.fix = "set CYAN_DATA_DIR to a folder you can write to"
		return c
	}
	probe, err := os.CreateTemp(cfg.DataDir, ".doctor-*")
	if err != nil {
		c.msg = fmt.Sprintf("%s is not writable: %v", cfg.DataDir, err)
		c.fix = "fix the folder's permissions or set CYAN_DATA_DIR to another folder"
		return c
	}
	probe.Close()
	os.Remove(probe.Name())
	c.ok = true
	pid, held, err := store.Holder(cfg.DataDir)
	switch {
	case err != nil:
		c.msg = fmt.Sprintf("%s is writable (lock unreadable: %v)", cfg.DataDir, err)
	case held:
		c.msg = fmt.Sprintf("%s is in use by a running daemon (pid %d)", cfg.DataDir, pid)
		if _, err := os.Stat(filepath.Join(cfg.DataDir, "db")); err == nil {
			if err := newClient(cfg).do("GET", "/healthz", nil, nil); err != nil {
				c.warn = true
				c.msg += ", but its API does not answer: " + err.Error()
			} else {
				c.msg += " that answers at " + newClient(cfg).base
			}
		}
	default:
		c.msg = fmt.Sprintf("%s is writable; no daemon runs on it (start one with 'cyan serve')", cfg.DataDir)
	}
	return c
}

// checkDatabase checks the database of a stopped data dir as a start
// would (read only), and says what the store last recorded: a start that
// found fewer messages than recorded fails until the owner repairs it.
func checkDatabase(cfg *config.Config) check {
	c := check{name: "database"}
	_, held, _ := store.Holder(cfg.DataDir)
	if !held {
		var de *store.DamageError
		if err := store.CheckDir(cfg.DataDir); errors.As(err, &de) {
			c.msg = fmt.Sprintf("%s: %s", de.File, de.Problem)
			c.fix = "load a backup into an empty data dir (cyan restore BACKUP), or salvage what can be read into a new one (cyan repair NEW_DIR)"
			return c
		} else if err != nil {
			c.msg = err.Error()
			return c
		}
	}
	rec, err := store.LastRecord(cfg.DataDir)
	switch {
	case err != nil:
		c.msg = err.Error()
		c.fix = "cyan repair NEW_DIR copies the database into a new data dir with a new record"
	case rec == nil:
		c.ok = true
		c.msg = "no record yet (the store writes one at its first start)"
	case rec.Short != nil:
		c.msg = rec.Short.String()
		c.fix = "cyan repair NEW_DIR salvages what the files still hold; cyan restore BACKUP loads a backup into an empty data dir"
	default:
		c.ok = true
		how := "at a checkpoint"
		if rec.Clean {
			how = "at its last clean stop"
		}
		c.msg = fmt.Sprintf("%d messages %s (%s); the files check out", rec.Messages, how, rec.Written.Local().Format("2006-01-02 15:04:05"))
		if held {
			c.msg = fmt.Sprintf("%d messages at the last checkpoint (%s); the running daemon's /healthz says how it is now", rec.Messages, rec.Written.Local().Format("2006-01-02 15:04:05"))
		}
	}
	return c
}

func checkPersona(cfg *config.Config) check {
	c := check{name: "persona"}
	var (
		p   *persona.Persona
		err error
	)
	if cfg.Persona == "" {
		p, err = persona.Default()
	} else {
		p, err = persona.Load(cfg.Persona)
	}
	if err != nil {
		c.msg = err.Error()
		c.fix = "fix the file and line named above, or remove persona: from the config to use the built-in one"
		return c
	}
	if _, err := p.Render(map[string]any{"channel": "doctor"}); err != nil {
		c.msg = "the root prompt does not render: " + err.Error()
		c.fix = "give the variable a value in the front-matter, or a default with ${name = default}"
		return c
	}
	if p.Lorebook != nil {
		if _, err := lorebook.Parse(p.Lorebook); err != nil {
			c.msg = fmt.Sprintf("%s: %v", p.LorebookFile, err)
			c.fix = "fix the lorebook file, or remove lorebook: from persona.md"
			return c
		}
	}
	c.ok = true
	where := "built in"
	if p.Dir != "" {
		where = p.Dir
	}
	c.msg = fmt.Sprintf("%s (%s)", p.Name, where)
	if _, err := vrm.ReadTable(p.Dir); err != nil {
		c.ok, c.msg = false, c.msg+"; "+err.Error()
		c.fix = "fix " + vrm.TableFile + ` ({"emotion": {"expression": weight from 0 to 1}}), or remove it`
	} else if av, err := avatarInUse(p.Dir); err != nil {
		c.ok, c.msg = false, c.msg+"; "+err.Error()
		c.fix = "replace avatar.vrm with a model exported as .vrm (VRoid Studio, UniVRM), or remove it: the page shows the pictures or the drawn face"
	} else {
		c.msg += "; " + av + "; the page's conversation " + persona.PageChannelOf(p)
	}
	return c
}

// checkLLM checks the model: through the running daemon when one
// answers (its own client and settings, POST /api/v1/llm/check), else with
// this shell's settings. It lists the endpoint's models and asks for a
// one-word answer.
func checkLLM(cfg *config.Config, timeout time.Duration) []check {
	var res llm.CheckResult
	if err := newClient(cfg).do("POST", "/api/v1/llm/check", nil, &res); err == nil {
		return llmChecks(res, cfg, "through the running daemon: ")
	}
	client, err := llm.New(llm.Options{
		Provider: cfg.LLM.Provider, BaseURL: cfg.LLM.BaseURL, Model: cfg.LLM.Model, APIKey: cfg.LLM.APIKey,
		Timeout: timeout, MaxRetries: -1,
	})
	if err != nil {
		return []check{{name: "llm", msg: err.Error(), fix: "correct the LLM settings ('cyan config check' shows them)"}}
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return llmChecks(llm.Check(ctx, client, cfg.LLM.Model), cfg, "")
}

// llmChecks are the lines of an llm.CheckResult; where says whose client
// it was.
func llmChecks(r llm.CheckResult, cfg *config.Config, where string) []check {
	endpoint := check{name: "llm", msg: where + "endpoint " + r.Endpoint}
	switch {
	case r.Unreachable:
		endpoint.msg = where + r.ModelsError
		return []check{endpoint}
	case r.ModelsError != "":
		endpoint.ok, endpoint.warn = true, true
		endpoint.msg += " answers, but does not list its models: " + r.ModelsError
	default:
		endpoint.ok = true
		endpoint.msg += fmt.Sprintf(" answers and lists %d model(s)", len(r.Models))
		if !r.Listed && len(r.Models) > 0 {
			endpoint.warn = true
			endpoint.msg += fmt.Sprintf("; %q is not among them (%s)", r.Model, strings.Join(first(r.Models, 8), ", "))
			endpoint.fix = "set CYAN_LLM_MODEL to one of the listed models" + pullAdvice(r, cfg)
			if where != "" {
				endpoint.fix = "the daemon's model: " + endpoint.fix + ", then restart the daemon"
			}
		}
	}
	chat := check{name: "model"}
	if !r.Answered {
		chat.msg = where + r.ChatError
		return []check{endpoint, chat}
	}
	chat.ok = true
	chat.msg = fmt.Sprintf("%s%s answers (%d tokens in, %d out)", where, r.Model, r.InputTokens, r.OutputTokens)
	if where != "" && r.Model != cfg.LLM.Model {
		chat.warn = true
		chat.msg += fmt.Sprintf("; this shell's settings name %q", cfg.LLM.Model)
		chat.fix = "the daemon keeps the model it started with; restart it to use this shell's settings"
	}
	out := []check{endpoint, chat}
	tools := check{name: "tools", ok: r.Tools, msg: where + "the model takes a tool (turns offer cyan's tools)", fix: r.ToolsFix}
	if !r.Tools {
		tools.msg = where + r.ToolsError
	} else if !r.ToolCalled {
		tools.msg += "; it answered in words instead of calling the probe's tool"
	}
	steps := check{name: "json", ok: r.JSON, msg: where + "a JSON step (schema output, thinking off) comes back as JSON", fix: r.JSONFix}
	if !r.JSON {
		// Steps then ask for the shape in the prompt and retry: a warning,
		// not a failure.
		steps.ok, steps.warn = true, true
		steps.msg = where + r.JSONError
	}
	return append(out, tools, steps, windowCheck(r, cfg, where))
}

// pullAdvice is how to get a model that is not listed: ollama pull for an
// Ollama server, nothing for Anthropic or a hosted API (their models are
// not pulled).
func pullAdvice(r llm.CheckResult, cfg *config.Config) string {
	if r.Provider == "anthropic" || cfg.LLM.Provider == "anthropic" {
		return fmt.Sprintf(" (Anthropic lists dated ids; %q must be one of them or an alias of one)", r.Model)
	}
	if r.Window != nil && r.Window.Server == "ollama" || strings.Contains(cfg.LLM.BaseURL, ":11434") {
		return fmt.Sprintf(", or pull it (ollama pull %s)", r.Model)
	}
	return ""
}

// windowCheck is the doctor's window line: "prompt ≈ N tokens of M", and
// the fix when a turn's prompt does not fit the server's window.
func windowCheck(r llm.CheckResult, cfg *config.Config, where string) check {
	c := check{name: "window", ok: true}
	w := r.Window
	n, parts := r.PromptTokens, r.PromptParts
	if n == 0 {
		s := cfg.Agent.Sections
		n = cfg.Agent.ContextBudget + s.Main + s.Reference
		parts = "agent.context_budget and the main and reference budgets; the tools' schemas (about 2000 more) are counted by a running daemon"
	}
	if cfg.LLM.ContextWindow > 0 {
		w = &llm.Window{Tokens: cfg.LLM.ContextWindow, Source: "llm.context_window"}
	}
	if w == nil || w.Tokens == 0 {
		c.warn = true
		c.msg = fmt.Sprintf("%sprompt ≈ %d tokens (%s); the server does not say its window", where, n, parts)
		c.fix = "set llm.context_window to the server's window so turns fit their prompt to it"
		return c
	}
	c.msg = fmt.Sprintf("%sprompt ≈ %d tokens of %d (%s; %s)", where, n, w.Tokens, w.Source, parts)
	limit := w.Tokens * 92 / 100
	if n <= limit {
		return c
	}
	c.warn = true
	c.msg += "; a long conversation does not fit: turns keep only its newest messages (the trace says what left)"
	switch w.Server {
	case "ollama":
		c.fix = "start Ollama with a larger window (OLLAMA_CONTEXT_LENGTH=16384 ollama serve, or PARAMETER num_ctx 16384 in a Modelfile), or lower agent.context_budget"
	case "llama.cpp":
		c.fix = "start llama-server with a larger context (-c 16384), or lower agent.context_budget"
	case "vllm":
		c.fix = "start vLLM with a larger --max-model-len, or lower agent.context_budget"
	default:
		c.fix = "lower agent.context_budget, or choose a model with a larger window"
	}
	return c
}

func first(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], "…")
	}
	return s
}
