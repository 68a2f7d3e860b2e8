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
		checks = append(checks, checkDataDir(cfg))
		checks = append(checks, checkParts(cfg)...)
		checks = append(checks, checkPersona(cfg), checkFiles(cfg), checkSandbox(cfg), checkUser(), checkOwners(cfg, cfg.Bridges.BridgeNames()))
		checks = append(checks, checkLLM(cfg, *timeout)...)
		checks = append(checks, checkEmbed(cfg, *timeout))
		checks = append(checks, checkVoice(cfg, *timeout))
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
		c.msg += "; " + av
	}
	return c
}

// checkLLM lists the endpoint's models and asks for a one-word answer.
func checkLLM(cfg *config.Config, timeout time.Duration) []check {
	client, err := llm.New(llm.Options{
		Provider: cfg.LLM.Provider, BaseURL: cfg.LLM.BaseURL, Model: cfg.LLM.Model, APIKey: cfg.LLM.APIKey,
		Timeout: timeout, MaxRetries: -1,
	})
	if err != nil {
		return []check{{name: "llm", msg: err.Error(), fix: "correct the LLM settings ('cyan config check' shows them)"}}
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	endpoint := check{name: "llm", msg: "endpoint " + client.Describe()}
	models, err := client.Models(ctx)
	switch {
	case err != nil && llm.KindOf(err) == llm.Unreachable:
		endpoint.msg = err.Error()
		return []check{endpoint}
	case err != nil:
		endpoint.ok, endpoint.warn = true, true
		endpoint.msg += " answers, but does not list its models: " + err.Error()
	default:
		endpoint.ok = true
		endpoint.msg += fmt.Sprintf(" answers and lists %d model(s)", len(models))
		if !hasModel(models, cfg.LLM.Model) && len(models) > 0 {
			endpoint.warn = true
			endpoint.msg += fmt.Sprintf("; %q is not among them (%s)", cfg.LLM.Model, strings.Join(first(models, 8), ", "))
			endpoint.fix = fmt.Sprintf("set CYAN_LLM_MODEL to one of the listed models, or pull it (ollama pull %s)", cfg.LLM.Model)
		}
	}
	chat := check{name: "model"}
	resp, err := client.Chat(ctx, llm.Request{
		Messages:  []llm.Message{{Role: llm.RoleUser, Content: "Reply with the single word: ok"}},
		MaxTokens: 16,
	})
	if err != nil {
		chat.msg = err.Error()
		return []check{endpoint, chat}
	}
	chat.ok = true
	chat.msg = fmt.Sprintf("%s answers (%d tokens in, %d out)", cfg.LLM.Model, resp.Usage.InputTokens, resp.Usage.OutputTokens)
	return []check{endpoint, chat}
}

func hasModel(models []string, want string) bool {
	for _, m := range models {
		if m == want || strings.TrimSuffix(m, ":latest") == strings.TrimSuffix(want, ":latest") {
			return true
		}
	}
	return false
}

func first(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], "…")
	}
	return s
}
