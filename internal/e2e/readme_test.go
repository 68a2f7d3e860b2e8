package e2e

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/internal/onebottest"
	"github.com/cyan-agent/cyan/internal/tgtest"
)

// readmeMarker opens the HTML comment that marks a README block this test
// runs; the fenced block follows it on the next line.
const readmeMarker = "<!-- The README test"

// readmeBlocks returns the marked fenced blocks of README.md, in order.
func readmeBlocks(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	var blocks []string
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], readmeMarker) {
			continue
		}
		if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "```") {
			t.Fatalf("README.md:%d: the marker is not followed by a fenced block", i+1)
		}
		var b []string
		for i += 2; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
			b = append(b, lines[i])
		}
		blocks = append(blocks, strings.Join(b, "\n")+"\n")
	}
	return blocks
}

// The README's blocks, as its quick starts order them.
const (
	qsAssistant = iota
	qsAssistantProof
	qsGroupConfig
	qsGroupProof
	qsDesktopImport
	qsDesktopProof
	qsBlocks
)

// runReadme runs a README shell block as a reader would, in dir, with the
// cyan under test first on PATH: `go run ./cmd/cyan` is the same command,
// and the README's address is the daemon's. A failing line fails it.
func runReadme(t *testing.T, d *daemon, envv []string, dir, block string) string {
	t.Helper()
	script := strings.ReplaceAll(block, "go run ./cmd/cyan", "cyan")
	if d != nil {
		script = strings.ReplaceAll(script, "127.0.0.1:7788", strings.TrimPrefix(d.base, "http://"))
	}
	c := exec.Command("sh", "-e", "-c", script)
	c.Dir = dir
	c.Env = withPath(envv, filepath.Dir(binary))
	c.Stdin = strings.NewReader("")
	out, err := c.CombinedOutput()
	if err != nil {
		var log string
		if d != nil {
			log = d.stderr.String()
		}
		t.Fatalf("the README block failed: %v\n%s\n--- output:\n%s\n--- daemon:\n%s", err, block, out, log)
	}
	return string(out)
}

// readmeTool skips when a program a quick start uses is missing, unless
// CYAN_REQUIRE_TOOLS=1 (CI, which installs them) makes that a failure.
func readmeTool(t *testing.T, name, why string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CYAN_REQUIRE_TOOLS") == "1" {
			t.Fatalf("%s is required (CYAN_REQUIRE_TOOLS=1) but not installed: %s", name, why)
		}
		t.Skipf("%s is not installed: %s", name, why)
	}
}

func withPath(envv []string, dir string) []string {
	out := []string{}
	for _, e := range envv {
		if !strings.HasPrefix(e, "PATH=") {
			out = append(out, e)
		}
	}
	return append(out, "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// TestReadmeQuickStarts runs the README's three quick starts against the
// fakes: the assistant's commands and its proving command against the fake
// model; the group bot's cyan.yaml through cyan config check as it is
// written, then (pointed at the fake Bot API) with a fake NapCat connected,
// and its proving command; the desktop companion's card import with a real
// public card and its proving command.
func TestReadmeQuickStarts(t *testing.T) {
	t.Parallel()
	blocks := readmeBlocks(t)
	if len(blocks) != qsBlocks {
		t.Fatalf("the README marks %d blocks for this test, want %d (assistant, its proof, the group bot's config, its proof, the card import, its proof)", len(blocks), qsBlocks)
	}

	t.Run("assistant", func(t *testing.T) {
		t.Parallel()
		readmeTool(t, "curl", "the assistant's block calls the API with it")
		// The README's model is Ollama's: the replica, at the window
		// Ollama gives a model on a small GPU (4096 tokens), which cuts a
		// longer prompt without a word. Every turn must fit it.
		fake := &llmtest.Server{Flavor: llmtest.Ollama, Window: 4096, Thinks: true}
		srv := httptest.NewServer(fake)
		t.Cleanup(srv.Close)
		url := srv.URL + "/v1"
		fake.SetDefault(func(llmtest.Request) llmtest.Reply {
			return llmtest.Reply{Text: "我是青蓝，很高兴认识你。"}
		})
		defer func() {
			for _, q := range fake.Requests() {
				if q.Truncated > 0 || q.PromptTokens > fake.Window {
					t.Errorf("Ollama's window cut a request: %d messages dropped, %d tokens of %d", q.Truncated, q.PromptTokens, fake.Window)
				}
			}
		}()
		dir := t.TempDir()
		d := start(t, dir, env(dir, url))
		out := runReadme(t, d, d.cliEnv(), dir, blocks[qsAssistant])
		if !strings.Contains(out, `"replies":["我是青蓝，很高兴认识你。"]`) {
			t.Errorf("the API call did not answer:\n%s", out)
		}
		if ms := d.messages(t, "home"); len(ms) != 2 || ms[0]["user"] != "me" {
			t.Errorf("channel home: %v", ms)
		}
		out = runReadme(t, d, d.cliEnv(), dir, blocks[qsAssistantProof])
		if strings.TrimSpace(out) != "我是青蓝，很高兴认识你。" {
			t.Errorf("cyan send printed %q, want the reply", out)
		}
		if ms := d.messages(t, "terminal"); len(ms) != 2 || ms[0]["text"] != "hello, who are you?" {
			t.Errorf("channel terminal: %v", ms)
		}
	})

	t.Run("group bot", func(t *testing.T) {
		t.Parallel()
		yaml := blocks[qsGroupConfig]
		dir := t.TempDir()
		data := filepath.Join(dir, "data")
		os.MkdirAll(data, 0o700)
		fake, url := fakeLLM(t)
		fake.SetDefault(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "大家好"} })

		// The block as written: its owners are placeholders, which the
		// check refuses, so nobody runs with a sample id as the owner.
		written := filepath.Join(dir, "cyan.yaml")
		if err := os.WriteFile(written, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		stdout, stderr, rc := cli(t, env(data, url, "CYAN_CONFIG="+written), "", "config", "check")
		if rc == 0 || !strings.Contains(stderr, "placeholder") || !strings.Contains(stderr, "permissions.owners") {
			t.Fatalf("cyan config check accepts the README's cyan.yaml with its placeholders: rc=%d\n%s%s", rc, stdout, stderr)
		}
		// With the reader's own ids put in: a valid configuration.
		ids := map[string]string{"qq": "2718281", "tg": "3141592"}
		yaml = regexp.MustCompile(`id:([a-z][a-z0-9_-]*):<[^>"]*>`).ReplaceAllStringFunc(yaml, func(m string) string {
			bridge := strings.Split(m, ":")[1]
			return "id:" + bridge + ":" + ids[bridge]
		})
		if err := os.WriteFile(written, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		stdout, stderr, rc = cli(t, env(data, url, "CYAN_CONFIG="+written), "", "config", "check")
		if rc != 0 || !strings.Contains(stdout, "# configuration is valid") || !strings.Contains(stdout, "id:qq:2718281") {
			t.Fatalf("cyan config check of the README's cyan.yaml with real ids: rc=%d\n%s%s", rc, stdout, stderr)
		}
		access := regexp.MustCompile(`(?m)^\s+access_token: "([^"]+)"`).FindStringSubmatch(yaml)
		token := regexp.MustCompile(`(?m)^(\s+)token: "([^"]+)"`).FindStringSubmatch(yaml)
		if access == nil || token == nil {
			t.Fatalf("the README's cyan.yaml has no access_token or Telegram token:\n%s", yaml)
		}

		// The same file, the Telegram bot pointed at the fake Bot API.
		tg := &tgtest.Server{Token: token[2], Bot: tgtest.User{ID: 777, IsBot: true, FirstName: "青蓝", Username: "qinglan_bot"}}
		api := httptest.NewServer(tg)
		defer api.Close()
		local := strings.Replace(yaml, token[0], token[0]+"\n"+token[1]+"api_url: "+api.URL+"\n"+token[1]+"poll_timeout: 2s", 1)
		live := filepath.Join(dir, "cyan-fakes.yaml")
		if err := os.WriteFile(live, []byte(local), 0o600); err != nil {
			t.Fatal(err)
		}
		d := start(t, data, env(data, url, "CYAN_CONFIG="+live))
		impl := &onebottest.Impl{SelfID: 10001, Nickname: "青蓝", Token: access[1]}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := impl.Connect(ctx, "ws"+strings.TrimPrefix(d.base, "http")+"/onebot/v11/ws"); err != nil {
			t.Fatalf("the fake NapCat cannot connect with the README's token: %v\n%s", err, d.stderr.String())
		}
		if _, err := tg.WaitCalls(ctx, 1, "getUpdates"); err != nil {
			t.Fatalf("the Telegram bot never polled: %v\n%s", err, d.stderr.String())
		}
		// Both connect on their own; the proving command is read until
		// they have (polling the daemon's state, not a schedule).
		var out string
		for {
			out = runReadme(t, d, d.cliEnv(), dir, blocks[qsGroupProof])
			if bridgeLine(out, "qq", "connected") && bridgeLine(out, "tg", "connected") {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("cyan bridges never showed both bridges connected:\n%s\n%s", out, d.stderr.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
		if !strings.Contains(out, "10001") || !strings.Contains(out, "qinglan_bot") && !strings.Contains(out, "777") {
			t.Errorf("cyan bridges does not name the bots:\n%s", out)
		}

		// In the group it answers when addressed, and the owner named by the
		// README's owners line is known by id (cyan bridges who).
		owner := regexp.MustCompile(`"id:qq:([0-9]+)"`).FindStringSubmatch(yaml)
		if owner == nil {
			t.Fatalf("the README's owners name no QQ account:\n%s", yaml)
		}
		ownerID, _ := strconv.ParseInt(owner[1], 10, 64)
		if _, err := impl.Group(555, onebottest.Sender{UserID: 4242, Nickname: "amy"}, onebottest.At("10001"), onebottest.Text(" hello")); err != nil {
			t.Fatal(err)
		}
		if _, err := impl.Private(onebottest.Sender{UserID: ownerID, Nickname: "me"}, onebottest.Text("it's me")); err != nil {
			t.Fatal(err)
		}
		calls, err := impl.WaitCalls(ctx, 2, "send_group_msg", "send_private_msg")
		if err != nil {
			t.Fatalf("no answers in QQ: %v\n%s", err, d.stderr.String())
		}
		for _, c := range calls {
			if c.Text() != "大家好" {
				t.Errorf("QQ got %q, want the model's reply", c.Text())
			}
		}
		who, _, rc := cli(t, d.cliEnv(), "", "bridges", "who")
		if rc != 0 || !regexp.MustCompile(`(?m)^qq\s+`+owner[1]+`\s.*\byes\s+id:qq:`+owner[1]+`$`).MatchString(who) {
			t.Errorf("cyan bridges who does not show the README's owner as the owner: rc=%d\n%s", rc, who)
		}
	})

	t.Run("desktop", func(t *testing.T) {
		t.Parallel()
		readmeTool(t, "espeak-ng", "the desktop quick start's voice")
		fake, url := fakeLLM(t)
		fake.SetDefault(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "ok"} })
		dir := t.TempDir()
		data := filepath.Join(dir, "data")
		os.MkdirAll(data, 0o700)
		card, err := os.ReadFile("../../persona/card/testdata/wild/st-seraphina.png")
		if err != nil {
			t.Fatal(err)
		}
		work := filepath.Join(dir, "work")
		os.MkdirAll(work, 0o700)
		if err := os.WriteFile(filepath.Join(work, "Seraphina.png"), card, 0o600); err != nil {
			t.Fatal(err)
		}
		envv := env(data, url)
		out := runReadme(t, nil, envv, work, blocks[qsDesktopImport])
		line := regexp.MustCompile(`(?m)^\s*(persona: .*Seraphina)\s*$`).FindStringSubmatch(out)
		if line == nil {
			t.Fatalf("cyan persona import printed no persona: line:\n%s", out)
		}
		// The reader adds the printed line to cyan.yaml in the data folder.
		if err := os.WriteFile(filepath.Join(data, "cyan.yaml"), []byte(line[1]+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		d := start(t, data, envv)
		out = runReadme(t, d, d.cliEnv(), work, blocks[qsDesktopProof])
		for _, want := range []*regexp.Regexp{
			regexp.MustCompile(`(?m)^\[ok  \] persona\s+Seraphina \(.*Seraphina\); avatar: `),
			regexp.MustCompile(`(?m)^\[ok  \] voice\s+\S+ speaks .*voiced channels: \[desktop\]`),
		} {
			if !want.MatchString(out) {
				t.Errorf("cyan doctor lacks %s:\n%s", want, out)
			}
		}
		_, p, _ := d.get("/api/v1/persona?channel=desktop")
		if p["name"] != "Seraphina" || p["voiced"] != true {
			t.Errorf("the page would show %v, want Seraphina, voiced", p)
		}
	})
}

// bridgeLine reports whether cyan bridges shows the bridge name in state.
func bridgeLine(out, name, state string) bool {
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) >= 3 && f[0] == name && f[2] == state {
			return true
		}
	}
	return false
}
