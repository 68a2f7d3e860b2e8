package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/events"
	"github.com/cyan-agent/cyan/limitproc"
	"github.com/cyan-agent/cyan/observer"
	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/recall"
	"github.com/cyan-agent/cyan/script"
	"github.com/cyan-agent/cyan/tools"
)

// toolParts is the tools side of the System.
type toolParts struct {
	reg     *tools.Registry
	paths   *tools.Paths
	secrets *tools.Secrets
	jail    *tools.Jail
	extras  *tools.Extras
	mcp     *tools.MCPManager
	limits  *limitproc.Chain
}

// buildTools makes the registry, the extra folders, MCP servers and the
// limit-process, and registers the tools every part exports in one loop.
// What a turn's call opens goes to the workspace's pulled-info area.
func (d *Daemon) buildTools(cfg *config.Config, version string) (*toolParts, error) {
	owners, err := tools.ParseOwners(cfg.Permissions.Owners)
	if err != nil {
		return nil, fmt.Errorf("daemon: permissions.owners: %w", err)
	}
	tp := &toolParts{}
	tp.reg = tools.New(tools.Options{Owners: owners, Owner: cfg.Permissions.Owner, Guest: cfg.Permissions.Guest, Pull: d.mem.PullRead,
		Logger: d.root.With("component", "tools")})
	home, _ := os.UserHomeDir()
	secrets, err := tools.NewSecrets(cfg.Tools.Secrets)
	if err != nil {
		return nil, fmt.Errorf("daemon: %w", err)
	}
	tp.secrets = secrets
	tp.paths, err = tools.NewPaths(cfg.Tools.Roots, cfg.DataDir, home)
	if err != nil {
		return nil, err
	}
	tp.paths.WithSecrets(secrets)
	term := cfg.Tools.Terminal
	tp.jail = tools.NewJail(tools.JailOptions{Mode: term.Sandbox, Roots: tp.paths.Roots(), DataDir: cfg.DataDir, Home: home, Secrets: secrets,
		Limits: tools.Limits{MemoryMB: term.MaxMemoryMB, Processes: term.MaxProcesses, CPUSeconds: term.MaxCPUSeconds,
			DiskMB: term.MaxDiskMB, TmpMB: term.MaxTmpMB}})
	if err := tp.jail.Err(); err != nil {
		d.log.Warn("the terminal and extra tools will not run", "err", err)
	} else {
		d.log.Info("sandbox", "protection", tp.jail.String())
	}
	sandbox := &tools.Sandbox{Timeout: time.Duration(term.Timeout), MaxOutput: term.MaxOutput, Env: term.Env, Jail: tp.jail}
	tp.extras, err = tp.reg.NewExtras(tools.ExtrasOptions{Dir: filepath.Join(cfg.DataDir, "tools", "extra"), Sandbox: sandbox, Scripts: d.scripts})
	if err != nil {
		return nil, err
	}
	reviews := recall.Reviews{Items: d.mem, Events: d.events, Now: d.now, Logger: d.root.With("component", "recall")}
	err = tp.reg.RegisterAll(
		tools.Builtins{Paths: tp.paths, Sandbox: sandbox, Shell: term.Shell, Scripts: d.scripts}.Tools(),
		d.mem.Tools(),
		d.events.Tools(),
		d.recall.Tools(recall.ToolOptions{Pull: d.mem.PullRange, Reviewed: reviews.Reviewed,
			Took: func(took time.Duration) { d.metrics.Recall("tool", "tool", took) }}),
		[]packets.Tool{tp.extras.CustomTool(), tp.reg.OpenTool(d.openers())},
		tp.reg.ComponentTools(d.components(tp)),
	)
	if err != nil {
		return nil, err
	}
	tp.extras.Load() // after the built-ins: a manifest cannot take their names
	tp.mcp = tp.reg.NewMCP(cfg.MCP.Servers, sandbox, version, d.root.With("component", "mcp"))
	tp.limits, err = limitproc.New(cfg.Limits)
	if err != nil {
		return nil, err
	}
	return tp, nil
}

func (tp *toolParts) enableApprovals(d *Daemon, ttl time.Duration, now func() time.Time) {
	tp.reg.EnableApprovals(tools.ApprovalOptions{Store: d.store, TTL: ttl, Now: now, Logger: d.root.With("component", "approvals")})
}

// openers are what the open tool opens: every %[...] reference a prompt
// shows — history ranges through recall's numbering, events, theories and
// objects through the event log, files through read_file — each checked
// against the caller's rights where the data is read.
func (d *Daemon) openers() map[string]tools.Opener {
	return map[string]tools.Opener{
		recall.HistoryPrefix: d.recall.OpenHistory(),
		events.RefEvent:      d.events.Open,
		events.RefTheory:     d.events.Open,
		events.RefObject:     d.events.Open,
	}
}

// components are the folders the component tools edit: the agent's own
// tools (written with custom_tool) and, with a persona folder, its prompt
// scripts and observers, each with its main.md; a file is checked (a
// script parses, an observer loads) before it is written.
func (d *Daemon) components(tp *toolParts) []tools.Component {
	personaPart := func(sub string) func() string {
		return func() string {
			if d.cfg.Persona == "" {
				return ""
			}
			return filepath.Join(d.cfg.Persona, sub)
		}
	}
	custom := tp.extras.Dir(tools.SourceCustom)
	return []tools.Component{
		{Name: "tools/extra/custom", Dir: func() string { return custom }, Base: tools.ComponentBase("custom"), Edit: "custom_tool", OwnerOnly: true, Secrets: tp.secrets},
		{Name: "persona/scripts", Dir: personaPart("scripts"), Within: personaPart(""), Base: tools.ComponentBase("scripts"), Secrets: tp.secrets, Check: script.CheckSource},
		{Name: "persona/observers", Dir: personaPart("observers"), Within: personaPart(""), Base: tools.ComponentBase("observers"), Secrets: tp.secrets, Check: observer.CheckSource},
	}
}
