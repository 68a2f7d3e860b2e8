package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func envOf(m map[string]string) Env { return func(k string) string { return m[k] } }

func TestLoadDefaults(t *testing.T) {
	dir := t.TempDir()
	c, err := Load(envOf(map[string]string{"HOME": dir}))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, ".local", "share", "cyan"); c.DataDir != want && os.Getenv("GOOS") == "" {
		t.Errorf("DataDir = %q, want %q", c.DataDir, want)
	}
	if c.Addr != DefaultAddr || c.LLM.Provider != "openai" || c.LLM.BaseURL != DefaultOpenAIBaseURL || c.LLM.Model != DefaultOpenAIModel {
		t.Errorf("defaults wrong: %+v", c)
	}
	if c.File != "" {
		t.Errorf("File = %q, want none", c.File)
	}
}

func TestLoadFileAndEnv(t *testing.T) {
	dir := t.TempDir()
	c, err := Load(envOf(map[string]string{
		EnvDataDir:  dir,
		EnvConfig:   "testdata/full.good.yml",
		EnvLLMModel: "from-env",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:9000" {
		t.Errorf("Addr = %q", c.Addr)
	}
	if c.LLM.Provider != "anthropic" || c.LLM.BaseURL != DefaultAnthropicBaseURL {
		t.Errorf("provider defaults not applied: %+v", c.LLM)
	}
	if c.LLM.Model != "from-env" {
		t.Errorf("env must override file: model = %q", c.LLM.Model)
	}
	if c.LLM.TimeoutDuration() != 30*time.Second || *c.LLM.Temperature != 0.7 {
		t.Errorf("timeout/temperature: %v %v", c.LLM.Timeout, c.LLM.Temperature)
	}
	if c.Agent.Compress.PerTurn != 2 || !c.Agent.Compress.Enabled || c.Agent.Compress.MinTokens != 40 || c.Generate.Traces != 200 {
		t.Errorf("compress and generate: %+v %+v", c.Agent.Compress, c.Generate)
	}
	if c.Agent.Sections.Main != 2000 || c.Agent.Sections.Plans != 300 {
		t.Errorf("a partial sections mapping must keep other defaults: %+v", c.Agent.Sections)
	}
	if ev := c.Events; time.Duration(ev.TopicSilence) != 45*time.Minute || ev.RememberDays != 7 || ev.RememberEvents != 40 ||
		ev.Weights.Importance != 2 || ev.Weights.Memory != 1 || ev.WeekStart != "monday" || ev.Location() != time.UTC {
		t.Errorf("events section: %+v", ev)
	}
	if want, _ := filepath.Abs("testdata/personas/mine"); c.Persona != want {
		t.Errorf("persona must resolve against the file's folder: %q, want %q", c.Persona, want)
	}
	out, err := c.YAML()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "1234567890") || !strings.Contains(string(out), "****abcd") {
		t.Errorf("api key not masked:\n%s", out)
	}
}

func TestLoadFileInDataDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte("addr: 127.0.0.1:7000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(envOf(map[string]string{EnvDataDir: dir}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:7000" || c.File != filepath.Join(dir, FileName) {
		t.Errorf("file in data dir not read: %q %q", c.Addr, c.File)
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		file string // written into the data dir as cyan.yaml when set
		want []string
	}{
		{name: "unknown key names file, line and key", env: map[string]string{EnvConfig: "testdata/unknown.bad.yml"},
			want: []string{"testdata/unknown.bad.yml:4: llm.modle: unknown key", "model"}},
		{name: "bad values are all reported", env: map[string]string{EnvConfig: "testdata/values.bad.yml"},
			want: []string{"values.bad.yml:3: llm.timeout: want a duration", "values.bad.yml:5: agent.max_tool_steps: want a whole number", "values.bad.yml:2: llm.provider: \"gemini\" is not a provider"}},
		{name: "bad env value names the variable", env: map[string]string{EnvLLMProvider: "nope"},
			want: []string{"CYAN_LLM_PROVIDER: \"nope\" is not a provider"}},
		{name: "bad addr from env", env: map[string]string{EnvAddr: "localhost"},
			want: []string{"CYAN_ADDR", "not host:port"}},
		{name: "bad base url", env: map[string]string{EnvLLMBaseURL: "ftp://x"},
			want: []string{"CYAN_LLM_BASE_URL", "not an http(s) URL"}},
		{name: "missing explicit file", env: map[string]string{EnvConfig: "testdata/nope.yml"},
			want: []string{"testdata/nope.yml", "CYAN_CONFIG"}},
		{name: "yaml syntax", file: "llm: [unclosed\n", want: []string{"cyan.yaml", "(syntax)"}},
		{name: "mapping where a value belongs", file: "addr:\n  host: x\n", want: []string{"cyan.yaml:2: addr: want a single value, got a mapping"}},
		{name: "data dir file cannot move the data dir", file: "data_dir: /elsewhere\n", want: []string{"cyan.yaml:1: data_dir: a file inside the data dir cannot move it"}},
		{name: "out of range", file: "agent:\n  context_budget: 10\nlog:\n  level: loud\n", want: []string{"cyan.yaml:2: agent.context_budget", "cyan.yaml:4: log.level"}},
		{name: "memory values", file: "memory:\n  curve: linear\n  evict_below: 1.5\n", want: []string{"cyan.yaml:2: memory.curve", "cyan.yaml:3: memory.evict_below"}},
		{name: "observer values", file: "observers:\n  quiet_hours: late\n  speech:\n    channels: [home]\n    every: 1s\n", want: []string{"cyan.yaml:2: observers.quiet_hours", "observers.speech.every"}},
		{name: "events values", file: "events:\n  topic_silence: 5s\n  remember_days: -1\n  weights: {recency: -2}\n  rollup_schedule: every night\n  week_start: friday\n  timezone: Mars/Olympus\n  objects_budget: -5\n",
			want: []string{"cyan.yaml:2: events.topic_silence", "cyan.yaml:3: events.remember_days", "events.weights.recency", "cyan.yaml:5: events.rollup_schedule", "cyan.yaml:6: events.week_start", "cyan.yaml:7: events.timezone", "cyan.yaml:8: events.objects_budget"}},
		{name: "compress and generate ranges", file: "agent:\n  compress:\n    per_turn: 99\n    min_tokens: -1\ngenerate:\n  traces: 0\n",
			want: []string{"cyan.yaml:3: agent.compress.per_turn: 99 is out of range", "cyan.yaml:4: agent.compress.min_tokens", "cyan.yaml:6: generate.traces"}},
		{name: "embedder", file: "embed:\n  provider: magic\n  index: faiss\n", want: []string{"cyan.yaml:2: embed.provider: \"magic\" is not an embedder", "cyan.yaml:3: embed.index"}},
		{name: "no embedder has no vector weight", file: "embed:\n  provider: none\n  vector_weight: 0.5\n", want: []string{"embed.vector_weight: is 0.5, but embed.provider: none makes no vectors"}},
		{name: "remote embedder needs a model", file: "llm:\n  provider: anthropic\nembed:\n  provider: openai\n", want: []string{"embed.model: is empty", "embed.base_url"}},
		{name: "opens_think", file: "llm:\n  opens_think: sometimes\n", want: []string{"cyan.yaml:2: llm.opens_think: \"sometimes\" is not auto"}},
		{name: "duplicate key", file: "addr: 127.0.0.1:1\naddr: 127.0.0.1:2\n", want: []string{"addr"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			env := map[string]string{EnvDataDir: dir}
			for k, v := range tt.env {
				env[k] = v
			}
			if tt.file != "" {
				if err := os.WriteFile(filepath.Join(dir, FileName), []byte(tt.file), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Load(envOf(env))
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestEmbedDefaults(t *testing.T) {
	dir := t.TempDir()
	c, err := Load(envOf(map[string]string{EnvDataDir: dir}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Embed.Provider != "builtin" || c.Embed.Index != "flat" {
		t.Errorf("embed defaults: %+v", c.Embed)
	}
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte("embed:\n  provider: ollama\n  model: nomic-embed-text\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = Load(envOf(map[string]string{EnvDataDir: dir}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Embed.BaseURL != DefaultOllamaEmbedURL {
		t.Errorf("ollama base url default: %q", c.Embed.BaseURL)
	}
	// One line: the model and the server come from the defaults and the LLM's.
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte("llm:\n  base_url: http://gpu-box:11434/v1\nembed:\n  provider: ollama\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, err = Load(envOf(map[string]string{EnvDataDir: dir})); err != nil {
		t.Fatal(err)
	}
	if c.Embed.BaseURL != "http://gpu-box:11434" || c.Embed.Model != DefaultOllamaEmbedModel {
		t.Errorf("one-line ollama embedder: %+v", c.Embed)
	}
}

func TestMask(t *testing.T) {
	for _, tt := range []struct{ in, want string }{{"", ""}, {"short", "****"}, {"sk-1234567890", "****7890"}} {
		if got := Mask(tt.in); got != tt.want {
			t.Errorf("Mask(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestToolSections(t *testing.T) {
	c, err := Load(envOf(map[string]string{EnvDataDir: t.TempDir(), EnvConfig: "testdata/tools.good.yml"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Permissions.Owners) != 2 || c.Permissions.Owner == nil || len(c.Permissions.Owner.Tools) != 3 || !c.Permissions.Owner.Tools[2].Object {
		t.Fatalf("permissions: %+v", c.Permissions)
	}
	if c.MCP.Servers[0].Env["FILES_TOKEN"] != "supersecretvalue" || c.Tools.Terminal.MaxOutput != 4096 || c.Limits.TokenBudgets["main-virtual"] != 100000 ||
		len(c.Tools.Secrets) != 2 || c.Tools.Terminal.MaxMemoryMB != 512 || c.Tools.Terminal.MaxProcesses != -1 {
		t.Fatalf("values: %+v %+v %+v", c.MCP, c.Tools, c.Limits)
	}
	out, _ := c.YAML()
	if strings.Contains(string(out), "supersecretvalue") {
		t.Fatalf("mcp env not masked:\n%s", out)
	}
	_, err = Load(envOf(map[string]string{EnvDataDir: t.TempDir(), EnvConfig: "testdata/tools.bad.yml"}))
	for _, want := range []string{"tools.bad.yml:3: permissions.owner: tools[1]", "cannot negate", "tools.bad.yml:5: permissions.guest", "maybe", "bad__name", "limits.forbidden",
		"tools.secrets", `entry 1 ("../x")`, `entry 2 ("a\nb") is not a pattern`, "tools.terminal.max_memory_mb", "tools.terminal.max_cpu_seconds"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
}

// TestZeroRetriesMeansNone: llm.max_retries: 0 turns retries off (the
// client's own 0 would mean its default).
func TestZeroRetriesMeansNone(t *testing.T) {
	for n, want := range map[int]int{0: -1, 1: 1, 2: 2, 10: 10} {
		if got := (LLM{MaxRetries: n}).Retries(); got != want {
			t.Errorf("max_retries %d: client gets %d, want %d", n, got, want)
		}
	}
}

func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:7788": true, "[::1]:1": true, "localhost:80": true,
		"0.0.0.0:7788": false, ":7788": false, "192.168.1.2:80": false, "garbage": false,
	} {
		if got := Loopback(addr); got != want {
			t.Errorf("Loopback(%q) = %v", addr, got)
		}
	}
}
