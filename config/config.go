package config

import (
	"fmt"
	"time"
)

// Config is the effective configuration of one daemon.
type Config struct {
	// DataDir holds the store, the lock and the API token. Only a file named
	// by CYAN_CONFIG may set it (a file found inside the data dir cannot move it).
	DataDir string `yaml:"data_dir"`
	// Addr is the HTTP listen address. Anything but loopback requires the
	// bearer token kept in <data dir>/api-token.
	Addr string `yaml:"addr"`
	// Persona is a persona folder; empty means the built-in 青蓝.
	Persona string `yaml:"persona"`
	LLM     LLM    `yaml:"llm"`
	Agent   Agent  `yaml:"agent"`
	API     API    `yaml:"api"`
	Log     Log    `yaml:"log"`
	// Embed selects the recall embedder.
	Embed Embed `yaml:"embed"`

	// File is the configuration file that was read ("" when none was).
	File string `yaml:"-"`
}

// LLM selects and tunes the chat provider.
type LLM struct {
	Provider    string   `yaml:"provider"` // openai | anthropic
	BaseURL     string   `yaml:"base_url"`
	Model       string   `yaml:"model"`
	APIKey      string   `yaml:"api_key" secret:"true"`
	Timeout     Duration `yaml:"timeout"`
	MaxRetries  int      `yaml:"max_retries"`
	Temperature *float64 `yaml:"temperature"`
	MaxTokens   int      `yaml:"max_tokens"`
}

// Agent tunes main-virtual's turn.
type Agent struct {
	// MaxToolSteps bounds the model calls of one turn (the first answer plus
	// the steps that follow tool results).
	MaxToolSteps int `yaml:"max_tool_steps"`
	// ContextBudget is the token budget of the conversation context.
	ContextBudget int `yaml:"context_budget"`
	// Sections are the token budgets of the system-prompt sections.
	Sections Sections `yaml:"sections"`
}

// Sections holds one token budget per system-prompt section (SPEC §2).
type Sections struct {
	Main      int `yaml:"main"`
	Reference int `yaml:"reference"`
	ToolCalls int `yaml:"tool_calls"`
	Events    int `yaml:"events"`
	Workspace int `yaml:"workspace"`
	Pulled    int `yaml:"pulled"`
	Plans     int `yaml:"plans"`
}

// API tunes the HTTP server.
type API struct {
	// MaxBodyBytes bounds a request body.
	MaxBodyBytes int `yaml:"max_body_bytes"`
	// AllowedHosts are extra Host header values accepted on a loopback bind
	// (the DNS-rebinding check); loopback names are always accepted.
	AllowedHosts []string `yaml:"allowed_hosts"`
}

// Embed selects the embedder recall's vector search uses. Changing the
// provider or model re-embeds the whole history in the background; recall
// keeps answering meanwhile.
type Embed struct {
	// Provider is builtin (no network, no download; the default), ollama
	// (/api/embed) or openai (any OpenAI-compatible /v1/embeddings).
	Provider string `yaml:"provider"`
	// BaseURL is the server (ollama: http://127.0.0.1:11434 by default;
	// openai: its /v1 base, required).
	BaseURL string `yaml:"base_url"`
	// Model is the embedding model (required for ollama and openai).
	Model  string `yaml:"model"`
	APIKey string `yaml:"api_key" secret:"true"`
	// Index is the vector index: flat (int8 vectors scanned on every core,
	// the default) or chromem (chromem-go collections, one per channel,
	// cached in a file in the data dir).
	Index string `yaml:"index"`
	// VectorWeight weighs vector matches against word matches (BM25 = 1)
	// when recall fuses them; 0 chooses: 0.1 for builtin, 1 for a model.
	VectorWeight float64 `yaml:"vector_weight"`
}

// DefaultOllamaEmbedURL is Ollama's address for embed.provider: ollama.
const DefaultOllamaEmbedURL = "http://127.0.0.1:11434"

// Log selects the log level and format.
type Log struct {
	Level  string `yaml:"level"`  // debug | info | warn | error
	Format string `yaml:"format"` // text | json
}

// Duration is a time.Duration written as "30s", "2m" or a number of seconds.
type Duration time.Duration

// String formats d like time.Duration.
func (d Duration) String() string { return time.Duration(d).String() }

// Default model and endpoint of each provider.
const (
	DefaultOpenAIBaseURL    = "http://127.0.0.1:11434/v1"
	DefaultOpenAIModel      = "qwen3:8b"
	DefaultAnthropicBaseURL = "https://api.anthropic.com"
	DefaultAnthropicModel   = "claude-sonnet-4-5"
	DefaultAddr             = "127.0.0.1:7788"
)

// Defaults returns the built-in configuration, before the data dir and the
// provider-dependent defaults are filled in.
func Defaults() Config {
	return Config{
		Addr: DefaultAddr,
		LLM: LLM{
			Provider:   "openai",
			Timeout:    Duration(120 * time.Second),
			MaxRetries: 2,
		},
		Agent: Agent{
			MaxToolSteps:  4,
			ContextBudget: 6000,
			Sections: Sections{
				Main:      3000,
				Reference: 800,
				ToolCalls: 800,
				Events:    800,
				Workspace: 1500,
				Pulled:    600,
				Plans:     300,
			},
		},
		API:   API{MaxBodyBytes: 1 << 20},
		Embed: Embed{Provider: "builtin", Index: "flat"},
		Log:   Log{Level: "info", Format: "text"},
	}
}

// providerDefaults fills the endpoint and model a provider implies.
func (c *Config) providerDefaults() {
	switch c.LLM.Provider {
	case "anthropic":
		if c.LLM.BaseURL == "" {
			c.LLM.BaseURL = DefaultAnthropicBaseURL
		}
		if c.LLM.Model == "" {
			c.LLM.Model = DefaultAnthropicModel
		}
	default:
		if c.LLM.BaseURL == "" {
			c.LLM.BaseURL = DefaultOpenAIBaseURL
		}
		if c.LLM.Model == "" {
			c.LLM.Model = DefaultOpenAIModel
		}
	}
	if c.Embed.Provider == "ollama" && c.Embed.BaseURL == "" {
		c.Embed.BaseURL = DefaultOllamaEmbedURL
	}
}

// Error is a configuration error. It names the file and line, or the
// environment variable, and the key.
type Error struct {
	File string // the file, or "" for the environment
	Line int    // 1-based; 0 when unknown
	Env  string // the environment variable, when the value came from one
	Key  string // dotted key, e.g. "llm.provider"
	Msg  string
}

func (e *Error) Error() string {
	switch {
	case e.Env != "":
		return fmt.Sprintf("config: %s: %s", e.Env, e.Msg)
	case e.File != "" && e.Line > 0:
		return fmt.Sprintf("config: %s:%d: %s: %s", e.File, e.Line, e.Key, e.Msg)
	case e.File != "":
		return fmt.Sprintf("config: %s: %s: %s", e.File, e.Key, e.Msg)
	default:
		return fmt.Sprintf("config: %s: %s", e.Key, e.Msg)
	}
}
