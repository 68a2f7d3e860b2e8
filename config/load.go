package config

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

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
		{"workspace", c.Agent.Sections.Workspace}, {"pulled", c.Agent.Sections.Pulled},
		{"plans", c.Agent.Sections.Plans},
	} {
		if s.v < 0 {
			bad("agent.sections."+s.key, "a token budget must not be negative")
		}
	}
	switch c.Embed.Provider {
	case "builtin":
	case "ollama", "openai":
		if u, err := url.Parse(c.Embed.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("embed.base_url", "%q is not an http(s) URL; name the embedding server (e.g. %s for ollama)", c.Embed.BaseURL, DefaultOllamaEmbedURL)
		}
		if strings.TrimSpace(c.Embed.Model) == "" {
			bad("embed.model", "is empty; name the embedding model (e.g. nomic-embed-text), or use embed.provider: builtin")
		}
	default:
		bad("embed.provider", "%q is not an embedder; use builtin (no network), ollama or openai", c.Embed.Provider)
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
	if !slices.Contains([]string{"debug", "info", "warn", "error"}, c.Log.Level) {
		bad("log.level", "%q is not one of debug, info, warn, error", c.Log.Level)
	}
	if !slices.Contains([]string{"text", "json"}, c.Log.Format) {
		bad("log.format", "%q is not text or json", c.Log.Format)
	}
	return errors.Join(errs...)
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
