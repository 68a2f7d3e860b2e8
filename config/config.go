package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/packets"
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
	Persona   string    `yaml:"persona"`
	LLM       LLM       `yaml:"llm"`
	Agent     Agent     `yaml:"agent"`
	Memory    Memory    `yaml:"memory"`
	Observers Observers `yaml:"observers"`
	API       API       `yaml:"api"`
	Log       Log       `yaml:"log"`
	// Permissions decide who may call which tool.
	Permissions Permissions `yaml:"permissions"`
	// Tools configures the built-in file and terminal tools.
	Tools Tools `yaml:"tools"`
	// MCP lists the MCP servers whose tools are offered.
	MCP MCP `yaml:"mcp"`
	// Limits configures the limit-process.
	Limits   Limits   `yaml:"limits"`
	Events   Events   `yaml:"events"`
	Generate Generate `yaml:"generate"`
	// Embed selects the recall embedder.
	Embed Embed `yaml:"embed"`
	// Bridges are the chat-app bridges (QQ through OneBot v11, Telegram).
	Bridges Bridges `yaml:"bridges"`
	// TTS selects the voice.
	TTS TTS `yaml:"tts"`
	// ShutdownTimeout bounds a shutdown (SIGTERM, cyan stop); Store and
	// Backup are the database's safety margin and scheduled backups
	// (store.go).
	ShutdownTimeout Duration `yaml:"shutdown_timeout"`
	Store           Store    `yaml:"store"`
	Backup          Backup   `yaml:"backup"`

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
	// Vision: the model accepts images. Pictures people send through a
	// bridge then reach it as image parts; otherwise as "%[…]" references.
	Vision bool `yaml:"vision"`
	// ContextWindow is the server's context window in tokens; 0 asks the
	// server (Ollama's /api/show and /api/ps, vLLM's and llama.cpp's
	// /v1/models, llama.cpp's /props). Turns fit their prompt to it.
	ContextWindow int `yaml:"context_window"`
	// ThinkOff is how a JSON step asks the model not to think: auto,
	// reasoning_effort, chat_template_kwargs or none (llm.Options.ThinkOff).
	ThinkOff string `yaml:"think_off"`
	// OpensThink says whether the model's chat template opens its
	// reasoning, so that it writes a bare "</think>" before its answer:
	// auto learns it from the model's first whole answer, which is held
	// until then; yes and no say it from the start (mainvirtual.Options.OpensThink).
	OpensThink string `yaml:"opens_think"`
	// FirstByteTimeout, when set, bounds the wait for an answer's first
	// byte, within Timeout.
	FirstByteTimeout Duration `yaml:"first_byte_timeout"`
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
	// Compress tunes the compression of old model messages.
	Compress Compress `yaml:"compress"`
}

// Compress tunes how main-virtual compresses its own older messages once
// the context outgrows its budget (SPEC §2). The persona's
// mini_full_context_count newest model messages and every user message
// stay whole.
type Compress struct {
	// Enabled turns compression on; off, messages that do not fit are
	// dropped, oldest first.
	Enabled bool `yaml:"enabled"`
	// PerTurn bounds the compressions made in one turn (each is a model
	// call); compressed forms are kept, so a message is compressed once.
	PerTurn int `yaml:"per_turn"`
	// MinTokens: a message shorter than this is left whole.
	MinTokens int `yaml:"min_tokens"`
}

// Generate tunes the generate calls of natural tools.
type Generate struct {
	// Traces is how many generate traces the store keeps (oldest dropped).
	Traces int `yaml:"traces"`
}

// Sections holds one token budget per system-prompt section (SPEC §2).
// The workspace's budget is memory.budget.
type Sections struct {
	Main      int `yaml:"main"`
	Reference int `yaml:"reference"`
	ToolCalls int `yaml:"tool_calls"`
	Events    int `yaml:"events"`
	Pulled    int `yaml:"pulled"`
	Plans     int `yaml:"plans"`
	// Lorebook bounds the entries of a character card's lorebook that enter
	// the prompt each turn. 0 (the default) gives a book its own
	// token_budget, or when it has none SillyTavern's default share of the
	// model's context window (25 %; of context_budget while the window is
	// not known); a number above 0 bounds both.
	Lorebook int `yaml:"lorebook"`
}

// Memory tunes the workspace and its decay (SPEC §3). Time is counted in
// the agent's turns.
type Memory struct {
	// InitialStability is S of a new item, in turns.
	InitialStability float64 `yaml:"initial_stability"`
	// EvictBelow is the R under which passive GC takes an item out of the
	// workspace.
	EvictBelow float64 `yaml:"evict_below"`
	// Gain is a, the growth of S on review.
	Gain float64 `yaml:"gain"`
	// MaxJumpMini: a review sooner than this many turns after the last one
	// does not grow S. MaxJumpLarge: sooner than this, S grows as if D+2.
	MaxJumpMini  int `yaml:"max_jump_mini"`
	MaxJumpLarge int `yaml:"max_jump_large"`
	// Curve is the forgetting curve: qinglan (R = 0.9^(Δt/S)) or fsrs6.
	Curve string `yaml:"curve"`
	// Budget is the workspace section's token budget; active GC keeps the
	// rendered workspace within it.
	Budget int `yaml:"budget"`
}

// Observers tunes the background processes and their cost governor.
type Observers struct {
	// Budget is the tokens per day all background work may spend together
	// (0: no limit). Observers over it pause until the next day.
	Budget int `yaml:"budget"`
	// MainBudget is main-observer's own tokens per day: workspace
	// compression, due plans and proactive speech.
	MainBudget int `yaml:"main_budget"`
	// EventsBudget is the event log's tokens per day: titling topics,
	// extracting facts and rolling days up (0: only the daemon-wide budget).
	EventsBudget int `yaml:"events_budget"`
	// QuietHours ("23:00-07:00", local time) hold proactive speech; plans
	// due in them fire when they end.
	QuietHours string `yaml:"quiet_hours"`
	// Speech lets main-observer decide on its own, every so often, whether
	// to start a conversation in the listed channels (off when none are).
	Speech Speech `yaml:"speech"`
}

// Speech configures main-observer's self-decided proactive speech.
type Speech struct {
	Every    Duration `yaml:"every"`
	Channels []string `yaml:"channels"`
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
	// TheoriesBudget bounds the tokens the theories a topic touches take in
	// the pulled-info area (at most half the area); 0 brings none.
	TheoriesBudget int `yaml:"theories_budget"`
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
	// AllowedOrigins are web origins ("https://app.example:8443") besides
	// the daemon's own whose pages may call the API from a browser; every
	// other Origin is refused on every route.
	AllowedOrigins []string `yaml:"allowed_origins"`
	// ReadHeaderTimeout bounds reading a request's headers, ReadTimeout
	// reading its body, IdleTimeout an idle keep-alive connection.
	ReadHeaderTimeout Duration `yaml:"read_header_timeout"`
	ReadTimeout       Duration `yaml:"read_timeout"`
	IdleTimeout       Duration `yaml:"idle_timeout"`
}

// Permissions decide who may call which tool (SPEC §5).
type Permissions struct {
	// Owners names the owner: "local" (the default) is the local user —
	// every private message without a chat-app id, which only who passes
	// the API's checks can send (the terminal, the page, your own API
	// calls); "id:<bridge>:<user id>" is that chat-app account anywhere (the
	// bridge must be configured); a bare name matches only private messages
	// without a platform id that give that name, since anyone can copy a
	// display name in a group. Empty: as "local".
	Owners []string `yaml:"owners"`
	// Owner and Guest are the permission objects of the owner's turns and
	// of everyone else's; empty keeps the built-in ones (the owner confirms
	// what writes or executes; others get no tool that reads files, writes,
	// executes or reaches the network).
	Owner *packets.Permission `yaml:"owner"`
	Guest *packets.Permission `yaml:"guest"`
	// ApprovalTTL is how long a call waits for the owner's answer.
	ApprovalTTL Duration `yaml:"approval_ttl"`
}

// Tools configures the built-in file and terminal tools.
type Tools struct {
	// Roots are the folders file and terminal tools may use; the first is
	// the terminal's working folder. Empty: file and terminal tools are
	// refused. The data dir and every credential file (Secrets) are denied
	// whatever the roots say.
	Roots []string `yaml:"roots"`
	// Secrets add credential files and folders to the built-in list
	// (tools.DefaultSecrets: .ssh, .gnupg, .env*, .envrc, .aws, .azure,
	// .config/gcloud, .netrc, .git-credentials, .npmrc, .pypirc,
	// .docker/config.json, .kube/config, shell histories, …) that the file
	// tools refuse and the sandbox covers; "!name" drops a built-in one.
	// An entry is a name (".netrc", any depth) or trailing path
	// (".docker/config.json"), each part a glob. Files holding a private
	// key ("-----BEGIN … PRIVATE KEY-----") are refused by their content.
	Secrets  []string `yaml:"secrets"`
	Terminal Terminal `yaml:"terminal"`
}

// Terminal configures the terminal tool and extra tools' programs.
type Terminal struct {
	Shell     string   `yaml:"shell"`
	Timeout   Duration `yaml:"timeout"`
	MaxOutput int      `yaml:"max_output"` // bytes kept, head and tail
	// Env names variables passed from the daemon's environment; names that
	// look like secrets are never passed.
	Env []string `yaml:"env"`
	// Sandbox is how commands are confined to tools.roots: auto (bwrap on
	// Linux; the terminal refuses to run where it cannot), bwrap, or off
	// (unconfined: only the lexical checks; cyan doctor warns).
	Sandbox string `yaml:"sandbox"`
	// MaxMemoryMB, MaxProcesses and MaxCPUSeconds bound each sandboxed
	// program: its memory (heap and private mappings), its processes at
	// once, its CPU time. 0 is the default (1024 MiB, 256, 120 s); -1
	// turns that limit off. A program stopped by one is told so.
	MaxMemoryMB   int `yaml:"max_memory_mb"`
	MaxProcesses  int `yaml:"max_processes"`
	MaxCPUSeconds int `yaml:"max_cpu_seconds"`
	// MaxDiskMB bounds each file a sandboxed program writes and the bytes a
	// command writes in all (1024 MiB); MaxTmpMB is the size of its /tmp
	// and of its /dev/shm, each (256 MiB). 0 is the default, -1 no limit.
	MaxDiskMB int `yaml:"max_disk_mb"`
	MaxTmpMB  int `yaml:"max_tmp_mb"`
}

// MCP lists the MCP servers cyan starts.
type MCP struct {
	Servers []MCPServer `yaml:"servers"`
}

// MCPServer is one MCP server run as a program speaking over stdio. Its
// tools are offered as "<name>__<tool>".
type MCPServer struct {
	Name    string            `yaml:"name"`
	Command string            `yaml:"command"`
	Args    []string          `yaml:"args"`
	Env     map[string]string `yaml:"env"`
}

// Limits configures the limit-process; a zero value turns a stage off.
type Limits struct {
	// Name is the system's name: the limit-process speaks as "<name>-limit".
	Name string `yaml:"name"`
	// MaxOutputChars bounds one answer (all its messages).
	MaxOutputChars int `yaml:"max_output_chars"`
	// Forbidden are regular expressions removed from outgoing text.
	Forbidden []string `yaml:"forbidden"`
	// MessagesPerMinute bounds the agent's messages per channel.
	MessagesPerMinute int `yaml:"messages_per_minute"`
	// ToolCallsPerMinute bounds tool calls per channel.
	ToolCallsPerMinute int `yaml:"tool_calls_per_minute"`
	// DenyTools are tool globs the limit-process refuses to let run.
	DenyTools []string `yaml:"deny_tools"`
	// TokenBudgets are tokens per hour for each process ("main-virtual",
	// an observer's name).
	TokenBudgets map[string]int `yaml:"token_budgets"`
}

// Embed selects the embedder recall's vector search uses. Changing the
// provider or model re-embeds the whole history in the background; recall
// keeps answering meanwhile.
type Embed struct {
	// Provider is builtin (GloVe vectors of English words compiled in: no
	// network, no download; the default), ollama (/api/embed), openai
	// (any OpenAI-compatible /v1/embeddings) or none (recall by words
	// alone: no vectors made or kept, for a small machine).
	Provider string `yaml:"provider"`
	// BaseURL is the server: by default the LLM's (llm.base_url without
	// its /v1 for ollama), or http://127.0.0.1:11434 for ollama when the
	// LLM is elsewhere; openai needs its /v1 base.
	BaseURL string `yaml:"base_url"`
	// Model is the embedding model (ollama: nomic-embed-text by default;
	// required for openai). An API key, when empty, is the LLM's if the
	// embeddings come from the LLM's server.
	Model  string `yaml:"model"`
	APIKey string `yaml:"api_key" secret:"true"`
	// Index is the vector index: flat (int8 vectors scanned on every core,
	// the default) or chromem (chromem-go collections, one per channel,
	// cached in a file in the data dir).
	Index string `yaml:"index"`
	// VectorWeight weighs vector matches against word matches (BM25 = 1)
	// when recall fuses them; 0 chooses: for builtin the weight
	// cross-validation on LoCoMo picked, 1 for a model.
	VectorWeight float64 `yaml:"vector_weight"`
}

// DefaultOllamaEmbedURL is Ollama's address for embed.provider: ollama
// when the LLM is not on an OpenAI-compatible server (whose host is used
// otherwise).
const DefaultOllamaEmbedURL = "http://127.0.0.1:11434"

// DefaultOllamaEmbedModel is the embedding model of embed.provider: ollama
// when embed.model is not set.
const DefaultOllamaEmbedModel = "nomic-embed-text"

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
			ThinkOff:   "auto",
			OpensThink: "auto",
		},
		Agent: Agent{
			MaxToolSteps:  4,
			ContextBudget: 6000,
			Sections: Sections{
				Main:      3000,
				Reference: 800,
				ToolCalls: 800,
				Events:    800,
				Pulled:    600,
				Plans:     300,
				Lorebook:  0,
			},
			Compress: Compress{Enabled: true, PerTurn: 4, MinTokens: 40},
		},
		Memory: Memory{
			InitialStability: 8,
			EvictBelow:       0.3,
			Gain:             5,
			MaxJumpMini:      3,
			MaxJumpLarge:     8,
			Curve:            "qinglan",
			Budget:           1500,
		},
		Observers: Observers{
			Budget:       200_000,
			MainBudget:   100_000,
			EventsBudget: 100_000,
			Speech:       Speech{Every: Duration(3 * time.Hour)},
		},
		API: API{MaxBodyBytes: 1 << 20, ReadHeaderTimeout: Duration(10 * time.Second),
			ReadTimeout: Duration(30 * time.Second), IdleTimeout: Duration(2 * time.Minute)},
		Log:         Log{Level: "info", Format: "text"},
		Permissions: Permissions{Owners: []string{"local"}, ApprovalTTL: Duration(time.Hour)},
		Tools:       Tools{Terminal: Terminal{Shell: "/bin/sh", Timeout: Duration(30 * time.Second), MaxOutput: 16 << 10}},
		Limits:      Limits{Name: "cyan", MaxOutputChars: 8000, MessagesPerMinute: 30, ToolCallsPerMinute: 60},
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
			TheoriesBudget: 200,
		},
		Generate: Generate{Traces: 1000},
		Embed:    Embed{Provider: "builtin", Index: "flat"},
		Bridges:  Bridges{Manners: DefaultManners(), ResumeMaxAge: Duration(30 * time.Minute), SilentAfter: Duration(15 * time.Minute)},
		TTS:      defaultTTS(),

		ShutdownTimeout: Duration(DefaultShutdownTimeout),
		Store:           Store{MinFreeMB: 256, MemoryMB: 64},
		Backup:          Backup{Keep: 7},
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
	c.Embed.defaults(c.LLM)
}

// defaults fill an embedding model's server and model from the LLM's, so
// one line (embed.provider: ollama) uses the Ollama the LLM talks to.
func (e *Embed) defaults(l LLM) {
	chatOnOpenAI := l.Provider != "anthropic" && l.BaseURL != ""
	switch e.Provider {
	case "ollama":
		if e.BaseURL == "" {
			e.BaseURL = DefaultOllamaEmbedURL
			if chatOnOpenAI {
				e.BaseURL = strings.TrimSuffix(strings.TrimRight(l.BaseURL, "/"), "/v1")
			}
		}
		if e.Model == "" {
			e.Model = DefaultOllamaEmbedModel
		}
	case "openai":
		if e.BaseURL == "" && chatOnOpenAI {
			e.BaseURL = l.BaseURL
		}
		if e.APIKey == "" && chatOnOpenAI {
			e.APIKey = l.APIKey
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
