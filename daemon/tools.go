package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/cyan-agent/cyan/metrics"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/events"
	"github.com/cyan-agent/cyan/limitproc"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/mainvirtual"
	"github.com/cyan-agent/cyan/memory"
	"github.com/cyan-agent/cyan/observer"
	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/recall"
	"github.com/cyan-agent/cyan/script"
	"github.com/cyan-agent/cyan/tools"
	"github.com/cyan-agent/cyan/turn"
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

// buildTools makes the registry with its built-ins, extra folders, MCP
// servers and approvals, and the limit-process.
func (d *Daemon) buildTools(cfg *config.Config, scripts *script.Library, version string) (*toolParts, error) {
	owners, err := tools.ParseOwners(cfg.Permissions.Owners)
	if err != nil {
		return nil, fmt.Errorf("daemon: permissions.owners: %w", err)
	}
	tp := &toolParts{}
	tp.reg = tools.New(tools.Options{Owners: owners, Owner: cfg.Permissions.Owner, Guest: cfg.Permissions.Guest,
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
		Limits: tools.Limits{MemoryMB: term.MaxMemoryMB, Processes: term.MaxProcesses, CPUSeconds: term.MaxCPUSeconds}})
	if err := tp.jail.Err(); err != nil {
		d.log.Warn("the terminal and extra tools will not run", "err", err)
	} else {
		d.log.Info("sandbox", "protection", tp.jail.String())
	}
	sandbox := &tools.Sandbox{Timeout: time.Duration(term.Timeout), MaxOutput: term.MaxOutput, Env: term.Env, Jail: tp.jail}
	for _, t := range (tools.Builtins{Paths: tp.paths, Sandbox: sandbox, Shell: term.Shell, Scripts: scripts}).Tools() {
		if err := tp.reg.Register(t); err != nil {
			return nil, err
		}
	}
	tp.extras, err = tp.reg.NewExtras(tools.ExtrasOptions{Dir: filepath.Join(cfg.DataDir, "tools", "extra"), Sandbox: sandbox, Scripts: scripts})
	if err != nil {
		return nil, err
	}
	if err := tp.reg.Register(tp.extras.CustomTool()); err != nil {
		return nil, err
	}
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

// callerOf is the tools' view of a turn.
// A proactive turn acts for its principal (turn.Principal): a
// plan's maker, or an observer under its own permission object.
func callerOf(q mainvirtual.Query, callID string) tools.Caller {
	c := tools.Caller{Channel: q.Channel, Speaker: q.Speaker, SpeakerID: q.SpeakerID, Kind: q.Kind, Process: "main-virtual", CallID: callID, MessageID: q.MessageID}
	if p := q.For; p != nil {
		c.Speaker, c.SpeakerID, c.Owner = p.Speaker, p.SpeakerID, p.Owner
		if p.Component != "" {
			c.Process = p.Component
		}
	}
	return c
}

// toolsAdapter offers the registry to main-virtual. workspace_usage is
// offered only while the channel's workspace is not empty (SPEC §2).
type toolsAdapter struct {
	reg     *tools.Registry
	mem     *memory.Memory
	metrics *metrics.Metrics // nil: not counted
}

var _ mainvirtual.Tools = toolsAdapter{}

func (a toolsAdapter) Offer(q mainvirtual.Query) []llm.Tool {
	var out []llm.Tool
	for _, s := range a.reg.Offer(callerOf(q, "")) {
		if s.Name == "workspace_usage" && !a.mem.HasWorkspace(viewerOf(a.reg, q)) {
			continue
		}
		desc := s.Description
		if s.Title != "" && s.Title != desc {
			desc = s.Title + ". " + desc
		}
		out = append(out, llm.Tool{Name: s.Name, Description: desc, Parameters: s.Parameters})
	}
	return out
}

func (a toolsAdapter) Call(ctx context.Context, q mainvirtual.Query, call llm.ToolCall) turn.ToolResult {
	o := a.reg.Call(ctx, callerOf(q, call.ID), call.Name, json.RawMessage(call.Arguments))
	a.metrics.ToolCall(call.Name, string(o.Decision))
	if o.Transient && !o.Failed() { // a read: its line in the pulled-info area
		var args struct{ Path, Ref string }
		_ = json.Unmarshal([]byte(call.Arguments), &args)
		a.mem.PullRead(q.Channel, args.Path+args.Ref, o.Result.OutputText)
	}
	return turn.ToolResult{Text: o.Text(), IsError: o.Failed(), Quiet: o.Report, Transient: o.Transient}
}

// limitAdapter puts the limit-process into main-virtual's turn.
type limitAdapter struct {
	chain *limitproc.Chain
	now   func() time.Time
}

var _ mainvirtual.Limiter = limitAdapter{}

func (a limitAdapter) turn(q mainvirtual.Query) limitproc.Turn {
	return limitproc.Turn{Channel: q.Channel, Speaker: q.Speaker, Process: "main-virtual", Now: a.now()}
}

func (a limitAdapter) notices(ns []limitproc.Notice) []turn.LimitNotice {
	var out []turn.LimitNotice
	for _, n := range ns {
		out = append(out, turn.LimitNotice{From: a.chain.Speaker(), Text: n.Text})
	}
	return out
}

func (a limitAdapter) Output(q mainvirtual.Query, parts []string, usage llm.Usage) ([]string, []turn.LimitNotice) {
	t := a.turn(q)
	parts, ns := a.chain.Output(t, parts)
	ns = append(ns, a.chain.Spend(t, usage.InputTokens+usage.OutputTokens)...)
	return parts, a.notices(ns)
}

func (a limitAdapter) Admit(q mainvirtual.Query) (time.Duration, string) {
	return a.chain.Admit(a.turn(q))
}

func (a limitAdapter) ToolCall(q mainvirtual.Query, call llm.ToolCall) (string, []turn.LimitNotice) {
	r, ns := a.chain.Call(a.turn(q), call.Name)
	return r, a.notices(ns)
}

// registerMemoryTools puts the workspace's tools into the registry: they
// change only the agent's own memory.
func registerMemoryTools(reg *tools.Registry, mem *memory.Memory) error {
	for _, mt := range mem.AllTools() {
		run := mt.Run
		err := reg.Register(tools.Tool{Spec: tools.SpecFrom(mt.ToolSpec, tools.SourceBuiltin), Run: func(ctx context.Context, c *tools.Call) (packets.Result, error) {
			component := ""
			if _, ok := reg.Component(c.Caller.Process); ok {
				component = c.Caller.Process // a plan it makes keeps its permission
			}
			out, err := run(ctx, memory.Call{Channel: c.Caller.Channel, Speaker: c.Caller.Speaker, SpeakerID: c.Caller.SpeakerID, Kind: c.Caller.Kind,
				Owner: c.Caller.Owner || reg.IsOwner(c.Caller), MessageID: c.Caller.MessageID, Perm: reg.PermissionFor(c.Caller), Component: component, Arguments: c.Args})
			return packets.Result{OutputText: out}, err
		}})
		if err != nil {
			return err
		}
	}
	return nil
}

// viewerOf is the workspace a turn sees: its channel, and whether its
// speaker is the owner talking in private (then the owner's items from other
// conversations follow them).
func viewerOf(reg *tools.Registry, q mainvirtual.Query) memory.Viewer {
	c := callerOf(q, "")
	return memory.Viewer{Channel: q.Channel, Owner: reg.IsOwner(c), Private: q.Kind != turn.KindGroup, Perm: reg.PermissionFor(c)}
}

// memorySources fills the workspace, pulled-info and plan slots. The
// pulled-info area is the workspace's (SPEC §2 item 6): what its tools and
// the recall tool pulled into the channel, escaped, newest kept when the
// budget is short.
func memorySources(mem *memory.Memory, reg *tools.Registry) map[turn.Slot]mainvirtual.Source {
	return map[turn.Slot]mainvirtual.Source{
		turn.SlotWorkspace: mainvirtual.SourceFunc(func(_ context.Context, q mainvirtual.Query, budget int, _ func(string) int) (mainvirtual.Section, error) {
			body, items := mem.WorkspaceSection(viewerOf(reg, q), budget)
			return mainvirtual.Section{Body: body, Items: items}, nil
		}),
		turn.SlotPulled: mainvirtual.SourceFunc(func(_ context.Context, q mainvirtual.Query, budget int, _ func(string) int) (mainvirtual.Section, error) {
			body, items := mem.PulledSection(q.Channel, budget)
			return mainvirtual.Section{Body: body, Items: items}, nil
		}),
		turn.SlotPlans: mainvirtual.SourceFunc(func(_ context.Context, q mainvirtual.Query, _ int, _ func(string) int) (mainvirtual.Section, error) {
			return mainvirtual.Section{Body: mem.PlansSection(viewerOf(reg, q))}, nil
		}),
	}
}

// registerOpenTool puts the open tool into the registry: every %[...]
// reference a prompt shows opens — history ranges through recall's
// numbering, events, theories and objects through the event log, files
// through read_file — each checked against the caller's rights where the
// data is read.
func registerOpenTool(reg *tools.Registry, idx *recall.Index, log *events.Log) error {
	return reg.Register(reg.OpenTool(map[string]tools.Opener{
		recall.HistoryPrefix: idx.OpenHistory(),
		events.RefEvent:      log.Open,
		events.RefTheory:     log.Open,
		events.RefObject:     log.Open,
	}))
}

// registerComponentTools puts the component tools into the registry: the
// agent's own tools (written with custom_tool) and, with a persona folder,
// its prompt scripts and observers, each with its main.md; a file is
// checked (a script parses, an observer loads) before it is written.
func (d *Daemon) registerComponentTools() error {
	personaPart := func(sub string) func() string {
		return func() string {
			if d.cfg.Persona == "" {
				return ""
			}
			return filepath.Join(d.cfg.Persona, sub)
		}
	}
	custom := d.tools.extras.Dir(tools.SourceCustom)
	comps := []tools.Component{
		{Name: "tools/extra/custom", Dir: func() string { return custom }, Base: tools.ComponentBase("custom"), Edit: "custom_tool", OwnerOnly: true, Secrets: d.tools.secrets},
		{Name: "persona/scripts", Dir: personaPart("scripts"), Within: personaPart(""), Base: tools.ComponentBase("scripts"), Secrets: d.tools.secrets,
			Check: func(file string, data []byte) error {
				if !strings.HasSuffix(file, script.Ext) {
					return fmt.Errorf("a prompt script's file ends in %s", script.Ext)
				}
				_, err := script.Parse(file, data)
				return err
			}},
		{Name: "persona/observers", Dir: personaPart("observers"), Within: personaPart(""), Base: tools.ComponentBase("observers"), Secrets: d.tools.secrets,
			Check: func(file string, data []byte) error {
				if !strings.HasSuffix(file, ".yaml") {
					return errors.New("an observer's file ends in .yaml")
				}
				_, err := observer.ParseDeclared(file, data)
				return err
			}},
	}
	for _, t := range d.tools.reg.ComponentTools(comps) {
		if err := d.tools.reg.Register(t); err != nil {
			return err
		}
	}
	return nil
}
