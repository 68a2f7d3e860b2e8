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
	Events  Events `yaml:"events"`

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

// Events tunes the event log: how topics close, which records are
// candidates for the "recent event records" section and how they are
// weighed, and when rollups run (SPEC §4).
type Events struct {
	// TopicSilence closes a topic: a conversation quiet this long is one
	// event.
	TopicSilence Duration `yaml:"topic_silence"`
	// RememberYears, RememberMonths, RememberDays and RememberEvents are how
	// many of the most recent year, month, day and event records are
	// candidates for the prompt (weeks follow the days: RememberDays/7,
	// at least 1).
	RememberYears  int `yaml:"remember_years"`
	RememberMonths int `yaml:"remember_months"`
	RememberDays   int `yaml:"remember_days"`
	RememberEvents int `yaml:"remember_events"`
	// Weights weigh a candidate's memory (S and the time since it), its
	// recency and its importance when choosing what fits the budget.
	Weights EventWeights `yaml:"weights"`
	// RollupSchedule is the cron spec (5 fields, local time) of the rollup
	// run; periods missed while the daemon was down are caught up at start.
	RollupSchedule string `yaml:"rollup_schedule"`
	// WeekStart is the first day of a week record: sunday or monday.
	WeekStart string `yaml:"week_start"`
	// Timezone names the zone of days, weeks and labels (IANA, e.g.
	// Asia/Shanghai); empty is the machine's local zone.
	Timezone string `yaml:"timezone"`
	// ObjectsBudget bounds the tokens of the people-present block inside
	// the events section (at most half the section).
	ObjectsBudget int `yaml:"objects_budget"`
}

// EventWeights are the selection weights of event records.
type EventWeights struct {
	Memory     float64 `yaml:"memory"`
	Recency    float64 `yaml:"recency"`
	Importance float64 `yaml:"importance"`
}

// API tunes the HTTP server.
type API struct {
	// MaxBodyBytes bounds a request body.
	MaxBodyBytes int `yaml:"max_body_bytes"`
	// AllowedHosts are extra Host header values accepted on a loopback bind
	// (the DNS-rebinding check); loopback names are always accepted.
	AllowedHosts []string `yaml:"allowed_hosts"`
}

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
		API: API{MaxBodyBytes: 1 << 20},
		Events: Events{
			TopicSilence:   Duration(30 * time.Minute),
			RememberYears:  3,
			RememberMonths: 6,
			RememberDays:   14,
			RememberEvents: 40,
			Weights:        EventWeights{Memory: 1, Recency: 1, Importance: 1},
			RollupSchedule: "10 0 * * *",
			WeekStart:      "sunday",
			ObjectsBudget:  300,
		},
		Log: Log{Level: "info", Format: "text"},
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
