package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/cyan-agent/cyan/backoff"
	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/packets"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCPManager runs the configured MCP servers and offers their tools as
// "<server>__<tool>". A server that dies is restarted with backoff (1s,
// doubling to a minute; back to 1s once it has run for a minute); while it
// is down its tools are withdrawn. MCP tools are taken to execute and reach
// the network: non-owners get none unless a rule says so.
type MCPManager struct {
	reg     *Registry
	servers []config.MCPServer
	sandbox *Sandbox
	log     *slog.Logger
	version string

	mu     sync.Mutex
	status map[string]string // server → "running", or why not
}

// NewMCP prepares the servers; Run starts them.
func (r *Registry) NewMCP(servers []config.MCPServer, sandbox *Sandbox, version string, log *slog.Logger) *MCPManager {
	if log == nil {
		log = r.log
	}
	return &MCPManager{reg: r, servers: servers, sandbox: sandbox, log: log, version: version, status: map[string]string{}}
}

// Status tells, per server, whether it runs.
func (m *MCPManager) Status() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]string, len(m.status))
	for k, v := range m.status {
		out[k] = v
	}
	return out
}

func (m *MCPManager) setStatus(name, s string) {
	m.mu.Lock()
	m.status[name] = s
	m.mu.Unlock()
}

// Run keeps every server running until ctx ends.
func (m *MCPManager) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for _, s := range m.servers {
		wg.Go(func() { m.keep(ctx, s) })
	}
	wg.Wait()
	<-ctx.Done()
	return nil
}

// mcpRestart is the wait before restarting a server that stopped: 1 s
// doubling to a minute, starting over after a run of a minute.
var mcpRestart = backoff.Policy{Base: time.Second, Max: time.Minute}

func (m *MCPManager) keep(ctx context.Context, s config.MCPServer) {
	source := SourceMCP + ":" + s.Name
	failures := 0
	for ctx.Err() == nil {
		began := time.Now()
		err := m.serve(ctx, s, source)
		m.reg.Replace(source, nil)
		if ctx.Err() != nil {
			return
		}
		if time.Since(began) > time.Minute {
			failures = 0
		}
		wait := mcpRestart.Delay(failures)
		failures++
		m.setStatus(s.Name, fmt.Sprintf("down (%v); restarting in %s", err, wait))
		m.log.Warn("MCP server stopped; restarting", "server", s.Name, "err", err, "in", wait)
		if !backoff.Sleep(ctx, wait) {
			return
		}
	}
}

// serve runs one life of a server: start, list its tools, offer them, and
// wait until it ends.
func (m *MCPManager) serve(ctx context.Context, s config.MCPServer, source string) error {
	cmd := exec.Command(s.Command, s.Args...)
	var extra []string
	for k, v := range s.Env {
		extra = append(extra, k+"="+v)
	}
	cmd.Env = m.sandbox.environ(extra...)
	setGroup(cmd)
	client := mcp.NewClient(&mcp.Implementation{Name: "cyan", Version: m.version}, nil)
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	session, err := client.Connect(cctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil)
	cancel()
	if err != nil {
		return fmt.Errorf("start %s: %w", s.Command, err)
	}
	defer func() {
		_ = session.Close()
		if cmd.Process != nil {
			killGroup(cmd.Process.Pid)
		}
	}()
	var list []packets.Tool
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for t, err := range session.Tools(lctx, nil) {
		if err != nil {
			return fmt.Errorf("list tools: %w", err)
		}
		name := s.Name + "__" + t.Name
		if !ValidName(name) {
			m.log.Warn("MCP tool skipped: its name cannot be a tool name", "server", s.Name, "tool", t.Name)
			continue
		}
		schema, _ := json.Marshal(t.InputSchema)
		if len(schema) == 0 || string(schema) == "null" {
			schema = nil
		}
		list = append(list, packets.Tool{ToolSpec: packets.ToolSpec{
			Name: name, Title: t.Title, Description: orText(t.Description, "the "+t.Name+" tool of the "+s.Name+" MCP server"),
			Parameters: schema, Kind: packets.ToolProcess, Effects: []string{packets.EffectExecute, packets.EffectNetwork},
		}, Run: m.caller(session, t.Name)})
	}
	for _, err := range m.reg.Replace(source, list) {
		m.log.Warn("MCP tool not offered", "server", s.Name, "err", err)
	}
	m.setStatus(s.Name, fmt.Sprintf("running, %d tools", len(list)))
	m.log.Info("MCP server running", "server", s.Name, "tools", len(list))
	done := make(chan error, 1)
	go func() { done <- session.Wait() }()
	select {
	case <-ctx.Done():
		return nil
	case err := <-done:
		if err == nil {
			err = errors.New("the server ended")
		}
		return err
	}
}

func (m *MCPManager) caller(session *mcp.ClientSession, tool string) packets.ToolFunc {
	return func(ctx context.Context, c *packets.ToolCall) (packets.Result, error) {
		var args map[string]any
		if err := json.Unmarshal(c.Args, &args); err != nil {
			return packets.Result{}, err
		}
		ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		defer cancel()
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			return packets.Result{}, fmt.Errorf("%s: %w", c.Tool, err)
		}
		var parts []string
		for _, ct := range res.Content {
			switch x := ct.(type) {
			case *mcp.TextContent:
				parts = append(parts, x.Text)
			default:
				b, _ := json.Marshal(x)
				parts = append(parts, string(b))
			}
		}
		text := strings.Join(parts, "\n")
		if text == "" && res.StructuredContent != nil {
			b, _ := json.Marshal(res.StructuredContent)
			text = string(b)
		}
		if res.IsError {
			return packets.Result{}, fmt.Errorf("%s: %s", c.Tool, text)
		}
		return packets.Result{OutputText: text}, nil
	}
}
