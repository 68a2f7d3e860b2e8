package config

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/clock"
	"github.com/cyan-agent/cyan/glob"

	"go.yaml.in/yaml/v3"
)

// Env reads an environment variable; os.Getenv in production, a map in tests.
type Env func(string) string

// The environment variables that override the file.
const (
	EnvConfig      = "CYAN_CONFIG"
	EnvDataDir     = "CYAN_DATA_DIR"
	EnvAddr        = "CYAN_ADDR"
	EnvLLMProvider = "CYAN_LLM_PROVIDER"
	EnvLLMBaseURL  = "CYAN_LLM_BASE_URL"
	EnvLLMModel    = "CYAN_LLM_MODEL"
	EnvLLMAPIKey   = "CYAN_LLM_API_KEY"
)

// FileName is the configuration file looked for inside the data dir.
const FileName = "cyan.yaml"

// envOverrides maps each environment variable to the key it sets.
var envOverrides = []struct {
	name, key string
	set       func(c *Config, v string)
}{
	{EnvDataDir, "data_dir", func(c *Config, v string) { c.DataDir = v }},
	{EnvAddr, "addr", func(c *Config, v string) { c.Addr = v }},
	{EnvLLMProvider, "llm.provider", func(c *Config, v string) { c.LLM.Provider = strings.ToLower(v) }},
	{EnvLLMBaseURL, "llm.base_url", func(c *Config, v string) { c.LLM.BaseURL = v }},
	{EnvLLMModel, "llm.model", func(c *Config, v string) { c.LLM.Model = v }},
	{EnvLLMAPIKey, "llm.api_key", func(c *Config, v string) { c.LLM.APIKey = v }},
}

// Load builds the effective configuration from the defaults, the file and
// the environment, and validates it. Every problem is reported at once.
func Load(env Env) (*Config, error) {
	if env == nil {
		env = os.Getenv
	}
	c := Defaults()
	dataDir := env(EnvDataDir)
	if dataDir == "" {
		d, err := DefaultDataDir(env)
		if err != nil {
			return nil, err
		}
		dataDir = d
	}
	c.DataDir = dataDir

	path, explicit := env(EnvConfig), true
	if path == "" {
		path, explicit = filepath.Join(dataDir, FileName), false
	}
	lines := map[string]int{}
	var decodeErr error
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		c.File = path
		fromFile := c
		decodeErr = decodeYAML(path, data, &fromFile, lines)
		if !explicit && fromFile.DataDir != c.DataDir {
			return nil, &Error{File: path, Line: lines["data_dir"], Key: "data_dir",
				Msg: "a file inside the data dir cannot move it; set CYAN_DATA_DIR, or name this file with CYAN_CONFIG"}
		}
		c = fromFile
		if c.Persona != "" && !filepath.IsAbs(c.Persona) {
			if abs, err := filepath.Abs(filepath.Join(filepath.Dir(path), c.Persona)); err == nil {
				c.Persona = abs
			}
		}
	case explicit || !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("config: read %s: %w (set %s to a readable YAML file, or unset it)", path, err, EnvConfig)
	}

	fromEnv := map[string]string{}
	for _, o := range envOverrides {
		if v := env(o.name); v != "" {
			o.set(&c, v)
			fromEnv[o.key] = o.name
		}
	}
	c.providerDefaults()
	if abs, err := filepath.Abs(c.DataDir); err == nil {
		c.DataDir = abs
	}
	validErr := c.validate(func(key string) *Error {
		if name, ok := fromEnv[key]; ok {
			return &Error{Env: name, Key: key}
		}
		return &Error{File: c.File, Line: lines[key], Key: key}
	})
	if err := errors.Join(decodeErr, validErr); err != nil {
		return nil, err
	}
	return &c, nil
}

func decodeYAML(path string, data []byte, c *Config, lines map[string]int) error {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return &Error{File: path, Key: "(syntax)", Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	d := &decoder{file: path, lines: lines}
	d.decode(&root, reflectValue(c), "")
	return errors.Join(d.errs...)
}

// validate checks every value; where names the origin of a key.
func (c *Config) validate(where func(key string) *Error) error {
	var errs []error
	bad := func(key, format string, args ...any) {
		e := where(key)
		e.Msg = fmt.Sprintf(format, args...)
		errs = append(errs, e)
	}
	if c.DataDir == "" {
		bad("data_dir", "is empty; set CYAN_DATA_DIR to a folder cyan may write to")
	}
	if host, port, err := net.SplitHostPort(c.Addr); err != nil {
		bad("addr", "%q is not host:port (for example %s)", c.Addr, DefaultAddr)
	} else if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		bad("addr", "port %q is not a number from 0 to 65535", port)
	} else if host == "" {
		bad("addr", "%q has no host; write 127.0.0.1:%s to stay on this machine, or 0.0.0.0:%s to listen on every interface (a bearer token is then required)", c.Addr, port, port)
	}
	if !slices.Contains([]string{"openai", "anthropic"}, c.LLM.Provider) {
		bad("llm.provider", "%q is not a provider; use openai (any OpenAI-compatible server, Ollama included) or anthropic", c.LLM.Provider)
	}
	if u, err := url.Parse(c.LLM.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad("llm.base_url", "%q is not an http(s) URL such as %s", c.LLM.BaseURL, DefaultOpenAIBaseURL)
	}
	if strings.TrimSpace(c.LLM.Model) == "" {
		bad("llm.model", "is empty; name the model to use")
	}
	if c.LLM.Timeout <= 0 {
		bad("llm.timeout", "must be positive, e.g. 120s")
	}
	if c.LLM.MaxRetries < 0 || c.LLM.MaxRetries > 10 {
		bad("llm.max_retries", "%d is out of range 0–10", c.LLM.MaxRetries)
	}
	if t := c.LLM.Temperature; t != nil && (*t < 0 || *t > 2) {
		bad("llm.temperature", "%g is out of range 0–2", *t)
	}
	if c.LLM.MaxTokens < 0 {
		bad("llm.max_tokens", "must not be negative (0 leaves the provider's default)")
	}
	if c.LLM.ContextWindow != 0 && (c.LLM.ContextWindow < 1024 || c.LLM.ContextWindow > 10_000_000) {
		bad("llm.context_window", "%d is out of range 1024–10000000 (0 asks the server)", c.LLM.ContextWindow)
	}
	if !slices.Contains([]string{"", "auto", "yes", "no"}, c.LLM.OpensThink) {
		bad("llm.opens_think", "%q is not auto (learn it from the model's first answer), yes or no", c.LLM.OpensThink)
	}
	if !slices.Contains([]string{"", "auto", "reasoning_effort", "chat_template_kwargs", "none"}, c.LLM.ThinkOff) {
		bad("llm.think_off", "%q is not auto, reasoning_effort (Ollama), chat_template_kwargs (vLLM, llama.cpp) or none", c.LLM.ThinkOff)
	}
	if c.LLM.FirstByteTimeout < 0 {
		bad("llm.first_byte_timeout", "must not be negative (0: only llm.timeout bounds a call)")
	}
	if c.Agent.MaxToolSteps < 1 || c.Agent.MaxToolSteps > 32 {
		bad("agent.max_tool_steps", "%d is out of range 1–32", c.Agent.MaxToolSteps)
	}
	if c.Agent.ContextBudget < 256 {
		bad("agent.context_budget", "%d tokens is too small; use at least 256", c.Agent.ContextBudget)
	}
	for _, s := range []struct {
		key string
		v   int
	}{
		{"main", c.Agent.Sections.Main}, {"reference", c.Agent.Sections.Reference},
		{"tool_calls", c.Agent.Sections.ToolCalls}, {"events", c.Agent.Sections.Events},
		{"pulled", c.Agent.Sections.Pulled},
		{"plans", c.Agent.Sections.Plans}, {"lorebook", c.Agent.Sections.Lorebook},
	} {
		if s.v < 0 {
			bad("agent.sections."+s.key, "a token budget must not be negative")
		}
	}
	m := c.Memory
	if m.InitialStability <= 0 {
		bad("memory.initial_stability", "must be a positive number of turns, e.g. 8")
	}
	if m.EvictBelow < 0 || m.EvictBelow >= 1 {
		bad("memory.evict_below", "%g is out of range: use an R from 0 (never evict) to below 1", m.EvictBelow)
	}
	if m.Gain <= 0 {
		bad("memory.gain", "must be positive (the seed suggests 5)")
	}
	if m.MaxJumpMini < 0 || m.MaxJumpLarge < m.MaxJumpMini {
		bad("memory.max_jump_large", "max_jump_mini (%d) and max_jump_large (%d) must satisfy 0 ≤ mini ≤ large", m.MaxJumpMini, m.MaxJumpLarge)
	}
	if m.Curve != "qinglan" && m.Curve != "fsrs6" {
		bad("memory.curve", "%q is not a curve; use qinglan or fsrs6", m.Curve)
	}
	if m.Budget < 50 {
		bad("memory.budget", "%d tokens is too small for a workspace; use at least 50", m.Budget)
	}
	o := c.Observers
	if o.Budget < 0 || o.MainBudget < 0 {
		bad("observers.budget", "token budgets must not be negative (0 means no limit)")
	}
	if o.QuietHours != "" && !validSpan(o.QuietHours) {
		bad("observers.quiet_hours", "%q is not HH:MM-HH:MM, e.g. 23:00-07:00", o.QuietHours)
	}
	if len(o.Speech.Channels) > 0 && o.Speech.Every < Duration(time.Minute) {
		bad("observers.speech.every", "%s is too often; use at least 1m", o.Speech.Every)
	}
	if c.Agent.Compress.PerTurn < 0 || c.Agent.Compress.PerTurn > 64 {
		bad("agent.compress.per_turn", "%d is out of range 0–64", c.Agent.Compress.PerTurn)
	}
	if c.Agent.Compress.MinTokens < 0 {
		bad("agent.compress.min_tokens", "must not be negative")
	}
	if c.Generate.Traces < 1 || c.Generate.Traces > 1_000_000 {
		bad("generate.traces", "%d is out of range 1–1000000", c.Generate.Traces)
	}
	switch c.Embed.Provider {
	case "builtin":
	case "none":
		if c.Embed.VectorWeight != 0 {
			bad("embed.vector_weight", "is %g, but embed.provider: none makes no vectors; remove it, or use embed.provider: builtin", c.Embed.VectorWeight)
		}
	case "ollama", "openai":
		if u, err := url.Parse(c.Embed.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("embed.base_url", "%q is not an http(s) URL; name the embedding server (e.g. %s for ollama)", c.Embed.BaseURL, DefaultOllamaEmbedURL)
		}
		if strings.TrimSpace(c.Embed.Model) == "" {
			bad("embed.model", "is empty; name the embedding model (e.g. nomic-embed-text), or use embed.provider: builtin")
		}
	default:
		bad("embed.provider", "%q is not an embedder; use builtin (no network), ollama, openai or none (words alone)", c.Embed.Provider)
	}
	if !slices.Contains([]string{"flat", "chromem"}, c.Embed.Index) {
		bad("embed.index", "%q is not flat or chromem", c.Embed.Index)
	}
	if c.Embed.VectorWeight < 0 || c.Embed.VectorWeight > 10 {
		bad("embed.vector_weight", "%g is out of range 0–10 (0 chooses by embedder)", c.Embed.VectorWeight)
	}
	if c.API.MaxBodyBytes < 1024 {
		bad("api.max_body_bytes", "%d is too small; use at least 1024", c.API.MaxBodyBytes)
	}
	for _, t := range []struct {
		key string
		d   Duration
	}{{"api.read_header_timeout", c.API.ReadHeaderTimeout}, {"api.read_timeout", c.API.ReadTimeout}, {"api.idle_timeout", c.API.IdleTimeout}} {
		if t.d <= 0 {
			bad(t.key, "must be a positive duration, e.g. 10s")
		}
	}
	for _, o := range c.API.AllowedOrigins {
		if u, err := url.Parse(o); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
			bad("api.allowed_origins", "%q is not an origin; write scheme://host[:port], e.g. http://localhost:3000", o)
		}
	}
	if !slices.Contains([]string{"", "auto", "bwrap", "off"}, c.Tools.Terminal.Sandbox) {
		bad("tools.terminal.sandbox", "%q is not auto, bwrap or off", c.Tools.Terminal.Sandbox)
	}
	c.validateTools(bad)
	c.validateEvents(bad)
	c.validateBridges(bad)
	c.validateTTS(bad)
	c.validateStore(bad)
	if !slices.Contains([]string{"debug", "info", "warn", "error"}, c.Log.Level) {
		bad("log.level", "%q is not one of debug, info, warn, error", c.Log.Level)
	}
	if !slices.Contains([]string{"text", "json"}, c.Log.Format) {
		bad("log.format", "%q is not text or json", c.Log.Format)
	}
	return errors.Join(errs...)
}

var serverName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9-]{0,31}$`)

// validateTools checks permissions, tools, mcp and limits.
func (c *Config) validateTools(bad func(key, format string, args ...any)) {
	if c.Permissions.ApprovalTTL <= 0 {
		bad("permissions.approval_ttl", "must be positive, e.g. 1h")
	}
	c.checkOwners(bad)
	for i, r := range c.Tools.Roots {
		if strings.TrimSpace(r) == "" {
			bad("tools.roots", "entry %d is empty; name a folder", i)
		} else if !filepath.IsAbs(r) {
			bad("tools.roots", "%q is not a full path; write the folder's absolute path", r)
		}
	}
	t := c.Tools.Terminal
	if t.Timeout <= 0 || time.Duration(t.Timeout) > time.Hour {
		bad("tools.terminal.timeout", "must be from 1s to 1h")
	}
	if t.MaxOutput < 256 || t.MaxOutput > 1<<20 {
		bad("tools.terminal.max_output", "%d bytes is out of range 256–1048576", t.MaxOutput)
	}
	if !filepath.IsAbs(t.Shell) {
		bad("tools.terminal.shell", "%q is not a full path (e.g. /bin/sh)", t.Shell)
	}
	for _, l := range []struct {
		key    string
		v, min int
	}{{"max_memory_mb", t.MaxMemoryMB, 16}, {"max_processes", t.MaxProcesses, 4}, {"max_cpu_seconds", t.MaxCPUSeconds, 1},
		{"max_disk_mb", t.MaxDiskMB, 1}, {"max_tmp_mb", t.MaxTmpMB, 1}} {
		if l.v < -1 || (l.v > 0 && l.v < l.min) {
			bad("tools.terminal."+l.key, "%d: give 0 for the default, -1 for no limit, or at least %d", l.v, l.min)
		}
	}
	for i, s := range c.Tools.Secrets {
		p := strings.Trim(strings.TrimPrefix(strings.TrimSpace(s), "!"), "/")
		if p == "" || strings.Contains(p, "..") {
			bad("tools.secrets", "entry %d (%q) is not a file or folder name; write .netrc, .aws or .docker/config.json", i, s)
		} else if err := glob.Check(p); err != nil {
			bad("tools.secrets", "entry %d (%q) is not a pattern: %v", i, s, err)
		}
	}
	seen := map[string]bool{}
	for i, s := range c.MCP.Servers {
		switch {
		case !serverName.MatchString(s.Name):
			bad("mcp.servers", "server %d: name %q must be a letter then letters, digits or -, at most 32 (its tools are <name>__<tool>)", i, s.Name)
		case seen[s.Name]:
			bad("mcp.servers", "server name %q is used twice", s.Name)
		case strings.TrimSpace(s.Command) == "":
			bad("mcp.servers", "server %q has no command", s.Name)
		}
		seen[s.Name] = true
	}
	l := c.Limits
	if !serverName.MatchString(l.Name) {
		bad("limits.name", "%q must be a letter then letters, digits or - (the limit-process speaks as <name>-limit)", l.Name)
	}
	for _, x := range []struct {
		key string
		v   int
	}{{"max_output_chars", l.MaxOutputChars}, {"messages_per_minute", l.MessagesPerMinute}, {"tool_calls_per_minute", l.ToolCallsPerMinute}} {
		if x.v < 0 {
			bad("limits."+x.key, "must not be negative (0 turns the stage off)")
		}
	}
	for _, f := range l.Forbidden {
		if _, err := regexp.Compile(f); err != nil {
			bad("limits.forbidden", "%q is not a regular expression: %v", f, err)
		}
	}
	for p, n := range l.TokenBudgets {
		if n < 0 {
			bad("limits.token_budgets."+p, "must not be negative")
		}
	}
}

func (c *Config) validateEvents(bad func(key, format string, args ...any)) {
	e := c.Events
	if time.Duration(e.TopicSilence) < time.Minute {
		bad("events.topic_silence", "%s is too short; a topic closes after this much silence, use at least 1m (e.g. 30m)", e.TopicSilence)
	}
	for _, r := range []struct {
		key string
		v   int
	}{{"remember_years", e.RememberYears}, {"remember_months", e.RememberMonths}, {"remember_days", e.RememberDays}, {"remember_events", e.RememberEvents}} {
		if r.v < 0 || r.v > 10000 {
			bad("events."+r.key, "%d is out of range 0–10000", r.v)
		}
	}
	for _, w := range []struct {
		key string
		v   float64
	}{{"memory", e.Weights.Memory}, {"recency", e.Weights.Recency}, {"importance", e.Weights.Importance}} {
		if w.v < 0 || w.v > 100 {
			bad("events.weights."+w.key, "%g is out of range 0–100", w.v)
		}
	}
	if _, err := clock.ParseCron(e.RollupSchedule); err != nil {
		bad("events.rollup_schedule", "%v", err)
	}
	if e.WeekStart != "sunday" && e.WeekStart != "monday" {
		bad("events.week_start", "%q is not sunday or monday", e.WeekStart)
	}
	if e.Timezone != "" {
		if _, err := time.LoadLocation(e.Timezone); err != nil {
			bad("events.timezone", "%q is not a known time zone; use an IANA name such as Asia/Shanghai, or leave it empty for the local zone", e.Timezone)
		}
	}
	if e.ObjectsBudget < 0 {
		bad("events.objects_budget", "a token budget must not be negative")
	}
	if e.TheoriesBudget < 0 {
		bad("events.theories_budget", "a token budget must not be negative; 0 brings no theories to a topic")
	}
}

// Location is the time zone of the event log's days and labels.
func (e Events) Location() *time.Location {
	if e.Timezone == "" {
		return time.Local
	}
	if loc, err := time.LoadLocation(e.Timezone); err == nil {
		return loc
	}
	return time.Local
}

// DefaultDataDir is the platform's user data dir joined with "cyan":
// $XDG_DATA_HOME or ~/.local/share on Unix, ~/Library/Application Support on
// macOS, %LocalAppData% on Windows.
func DefaultDataDir(env Env) (string, error) {
	var base string
	switch runtime.GOOS {
	case "windows":
		base = env("LocalAppData")
	case "darwin", "ios":
		if h := env("HOME"); h != "" {
			base = filepath.Join(h, "Library", "Application Support")
		}
	default:
		base = env("XDG_DATA_HOME")
		if base == "" || !filepath.IsAbs(base) {
			base = ""
			if h := env("HOME"); h != "" {
				base = filepath.Join(h, ".local", "share")
			}
		}
	}
	if base == "" {
		return "", errors.New("config: cannot find a user data folder (HOME is not set); set CYAN_DATA_DIR")
	}
	return filepath.Join(base, "cyan"), nil
}

// Duration of the LLM timeout, for callers.
func (l LLM) TimeoutDuration() time.Duration { return time.Duration(l.Timeout) }

// Loopback reports whether addr (host:port, as addr is checked to be)
// listens on this machine only: localhost or a loopback address.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Retries is llm.max_retries as the model client takes it: the client reads
// 0 as its own default and a negative count as none, so the file's 0 (no
// retries, as the key says) is passed as -1.
func (l LLM) Retries() int {
	if l.MaxRetries == 0 {
		return -1
	}
	return l.MaxRetries
}

// validSpan checks "HH:MM-HH:MM" with two different times.
func validSpan(s string) bool {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return false
	}
	ta, err1 := time.Parse("15:04", strings.TrimSpace(a))
	tb, err2 := time.Parse("15:04", strings.TrimSpace(b))
	return err1 == nil && err2 == nil && !ta.Equal(tb)
}
