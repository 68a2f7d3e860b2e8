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

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/packets"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCPManager runs the configured MCP servers and offers their tools as
// "<server>__<tool>". Each server is a part of the daemon's supervisor
// (Parts): one that dies is restarted there with backoff (1s, doubling to
// a minute; back to 1s once it has run for a minute); while it is down its
// tools are withdrawn. MCP tools are taken to execute and reach
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

// NewMCP prepares the servers; each of Parts runs one.
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

// MCPServerPart is one configured server as a long-running part: Run is
// one life of it (start, offer its tools, wait), returning when the server
// ends (an error) or ctx does (nil). The daemon's supervisor restarts it
// with backoff, shows its state and counts its restarts.
type MCPServerPart struct {
	Name string // the server's name (mcp.servers[].name)
	Run  func(ctx context.Context) error
}

// Parts are the configured servers, one part each.
func (m *MCPManager) Parts() []MCPServerPart {
	var out []MCPServerPart
	for _, s := range m.servers {
		out = append(out, MCPServerPart{Name: s.Name, Run: func(ctx context.Context) error { return m.life(ctx, s) }})
	}
	return out
}

// life runs the server once; while it is down its tools are withdrawn.
func (m *MCPManager) life(ctx context.Context, s config.MCPServer) error {
	source := SourceMCP + ":" + s.Name
	m.setStatus(s.Name, "starting")
	err := m.serve(ctx, s, source)
	m.reg.Replace(source, nil)
	if ctx.Err() != nil {
		return nil
	}
	m.setStatus(s.Name, fmt.Sprintf("down (%v); restarting", err))
	m.log.Warn("MCP server stopped", "server", s.Name, "err", err)
	return fmt.Errorf("mcp server %s: %w", s.Name, err)
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
