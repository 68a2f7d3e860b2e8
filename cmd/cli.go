package cmd

import (
	"errors"
	"flag"
	"io"
	"os"
	"strings"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/registry"
)

// Version is set at build time with -ldflags "-X github.com/cyan-agent/cyan/cmd.Version=…";
// otherwise cyan version reads the module version and the VCS revision
// from the build information.
var Version = "dev"

// IO is what a command reads and writes; tests give their own.
type IO struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Env    config.Env
}

// nouns are the resources of the command line, in help order; each has
// its verbs in commands.
func nouns() []noun {
	return []noun{
		{"history", "a channel's conversation", nil},
		{"trace", "what the model was asked: a channel's last prompt packet and the generate calls", nil},
		{"memory", "the workspace: the items the companion holds and their memory state", nil},
		{"observers", "the background observers", nil},
		{"bridges", "the chat-app bridges (" + strings.Join(registry.PlatformKeys(), ", ") + ")", platformRows},
		{"tool", "the tools: list them, run or check a call as the model's calls are", nil},
		{"approvals", "the tool calls waiting for your approval", nil},
		{"events", "the event log: records of topics, days, weeks, months, years", nil},
		{"objects", "the people, agents and things the companion knows, with their info blocks", nil},
		{"relations", "the relation lines between objects", nil},
		{"theories", "the theory packets: articles the companion keeps current", nil},
		{"script", "prompt scripts (*.ai.yaml), the natural tools' language", nil},
		{"persona", "personas and SillyTavern character cards", nil},
		{"service", "cyan as a service of your login: a systemd user unit (Linux) or a launchd agent (macOS)", nil},
		{"bench", "benchmarks that print tables", nil},
		{"config", "the configuration", voiceRows},
	}
}

// platformRows are the registered chat platforms, for 'cyan help bridges'.
func platformRows() (string, [][2]string) {
	var rows [][2]string
	for _, p := range registry.Platforms() {
		rows = append(rows, [2]string{"bridges." + p.Key, p.About})
	}
	return "Platforms (each a section of the configuration, a list of named bridges)", rows
}

// voiceRows are the registered voice providers, for 'cyan help config'.
func voiceRows() (string, [][2]string) {
	var rows [][2]string
	for _, v := range registry.Voices() {
		rows = append(rows, [2]string{v.Name(), v.About()})
	}
	return "Voices (tts.provider)", rows
}

// commands is the command table, in help order: the single-word actions,
// then each noun's verbs (the first of a noun is its default when it is
// ls). doc.go says how to add a row.
func commands() []verb {
	return []verb{
		{name: "serve", summary: "run the daemon (embedded storage; a local Ollama by default)", setup: serveCmd},
		{name: "stop", summary: "stop the running daemon (SIGTERM) and wait until it has let go of the data dir", setup: stopCmd},
		{name: "chat", summary: "chat with the running daemon in the terminal, replies streamed", daemon: true, setup: chatCmd,
			example: []string{"--channel", "home"}},
		{name: "send", args: "TEXT...", summary: "send one message and print the replies (none: \"(no reply)\" on stderr, exit 1)", daemon: true, setup: sendCmd,
			example: []string{"--channel", "home", "hello"}},
		{name: "recall", args: "QUERY...", summary: "search everything ever said (search mode), or let the model filter and summarise (tool mode)",
			daemon: true, setup: recallCmd, example: []string{"-n", "5", "what did nyalia say about her exams"}},
		{name: "import", args: "FILE", summary: "import history (JSON lines or a LoCoMo file) into the running daemon; importing twice adds nothing",
			daemon: true, setup: importCmd, example: []string{"history.jsonl"}},
		{name: "backup", args: "FILE", summary: "save a consistent backup of the database: the running daemon's, or the data dir's when none runs", setup: backupCmd,
			example: []string{"cyan.backup"}},
		{name: "restore", args: "FILE", summary: "load a backup into a data dir that has no database yet", setup: restoreCmd,
			example: []string{"cyan.backup"}},
		{name: "repair", args: "NEW_DIR", summary: "salvage what a damaged database still holds into a new data dir, and say what was lost (the damaged one is only read)", setup: repairCmd,
			example: []string{"~/cyan-repaired"}},
		{name: "export", args: "FILE", summary: "write everything cyan remembers as documented JSON lines (- for stdout); cyan import takes it back", setup: exportCmd,
			example: []string{"cyan-export.jsonl"}},
		{name: "say", args: "TEXT...", summary: "speak a text with the configured voice (no daemon needed): play it, or write it with --out", setup: sayCmd,
			example: []string{"--out", "hello.wav", "你好，我是青蓝。"}},
		{name: "doctor", summary: "check the data dir, the config, the LLM, the voice and who the owner is, and say how to fix what fails", setup: doctorCmd},
		{name: "version", summary: "print the version: the module version, the VCS revision and whether the work tree was modified", setup: versionCmd},
		{name: "help", args: "[COMMAND...]", summary: "print the commands, or one command's help (--json: the whole command table)", setup: helpCmd,
			example: []string{"memory"}},

		{noun: "history", name: "ls", summary: "print a channel's conversation, oldest first", daemon: true, setup: historyLs,
			example: []string{"--channel", "home", "-n", "20"}},

		{noun: "trace", name: "ls", summary: "list the newest generate calls; with --channel, first the channel's last prompt packet", daemon: true, setup: traceLs,
			example: []string{"--channel", "home"}},
		{noun: "trace", name: "show", args: "ID", summary: "show one generate call in full", daemon: true, setup: traceShow,
			example: []string{"0193f5a2-7c1e-7b3a-9d2e-5f4a3b2c1d0e"}},

		{noun: "memory", name: "ls", summary: "list the workspace's items with R, S and their state", daemon: true, setup: memoryLs,
			example: []string{"--all"}},
		{noun: "memory", name: "show", args: "ID", summary: "show one item: its content, origin and memory state", daemon: true, setup: memoryShow,
			example: []string{"w3"}},
		{noun: "memory", name: "curve", args: "ID", summary: "plot an item's R over the coming turns if it is not used", daemon: true, setup: memoryCurve,
			example: []string{"w3", "-n", "60"}},
		{noun: "memory", name: "forget", args: "ID", summary: "delete an item for good", daemon: true, setup: memoryForget,
			example: []string{"w3"}},

		{noun: "observers", name: "ls", summary: "list the observers: triggers, last and next run, tokens spent of the budget, state", daemon: true, setup: observersLs},
		{noun: "observers", name: "run", args: "NAME", summary: "run an observer now", daemon: true, setup: observersRun,
			example: []string{"main-observer"}},

		{noun: "bridges", name: "ls", summary: "list the bridges: connected, bot, chats seen, queue, counters, last error; replies not delivered, turns too old to resume", daemon: true, setup: bridgesLs},
		{noun: "bridges", name: "who", summary: "list who wrote to each bot privately, with the permissions.owners line that names them", daemon: true, setup: bridgesWho},

		{noun: "tool", name: "ls", summary: "list the tools: name, kind, source, effects, and what the owner's and others' rules decide", daemon: true, setup: toolLs},
		{noun: "tool", name: "run", args: "NAME [ARGS_JSON]", summary: "run a call through the same permission checks as the model's", daemon: true, setup: toolRunCmd,
			more: toolRunMore, example: []string{"read_file", `{"path": "/home/me/notes.txt"}`}},
		{noun: "tool", name: "check", args: "NAME [ARGS_JSON]", summary: "say what the rules decide for a call, without running it", daemon: true, setup: toolCheck,
			example: []string{"--as", "id:qq:999", "--kind", "group", "terminal", `{"command": "ls"}`}},

		{noun: "approvals", name: "ls", summary: "list the tool calls waiting for your approval, exactly: control and bidi characters shown as escapes (\\u202E)", daemon: true, setup: approvalsLs},
		{noun: "approvals", name: "allow", args: "ID", summary: "run a waiting call", daemon: true, setup: approvalsAnswer(true),
			example: []string{"a1b2c3"}},
		{noun: "approvals", name: "deny", args: "ID", summary: "refuse a waiting call; it does not run", daemon: true, setup: approvalsAnswer(false),
			example: []string{"a1b2c3"}},

		{noun: "events", name: "ls", summary: "list the event records and the rollups still pending", daemon: true, setup: eventsLs,
			example: []string{"--level", "day"}},
		{noun: "events", name: "rollup", summary: "close the topics that fell silent and run every rollup due now", daemon: true, setup: eventsRollup},

		{noun: "objects", name: "ls", summary: "list the objects and their info blocks, with where each fact came from and whose it is", daemon: true, setup: objectsLs},
		{noun: "objects", name: "confirm", args: "OBJECT-ID BLOCK-ID", summary: "vouch for a block a conversation made: it becomes yours", daemon: true, setup: objectsConfirm,
			example: []string{"o1", "b2"}},

		{noun: "relations", name: "ls", summary: "list the relation lines between objects, with their weights now", daemon: true, setup: relationsLs},

		{noun: "theories", name: "ls", summary: "list the theories: title, version, sources, and the article's first line", daemon: true, setup: theoriesLs},

		{noun: "script", name: "ls", summary: "list the prompt scripts by name: built in, or the persona's own", setup: scriptLs},
		{noun: "script", name: "run", args: "FILE", summary: "run a prompt script against the configured LLM and print its result", setup: scriptRun,
			more: scriptRunMore, example: []string{"--input", `{"text": "great phone"}`, "rate.ai.yaml"}},
		{noun: "script", name: "check", args: "FILE...", summary: "check prompt scripts without calling a model; errors name the file, line and column", setup: scriptCheck,
			example: []string{"my-persona/scripts/rate.ai.yaml"}},

		{noun: "persona", name: "import", args: "[FILE]", summary: "import a character card (PNG, JSON or CharX; V1/V2/V3) as a persona folder, or a SillyTavern World Info file as a lorebook", setup: personaImport,
			example: []string{"Seraphina.png", "--out", "Seraphina"}},
		{noun: "persona", name: "use", args: "DIR|NAME", summary: "make a persona folder (or default, the built-in one) the persona of the daemon's config file; each character has its own conversation", setup: personaUse,
			example: []string{"./Seraphina"}},
		{noun: "persona", name: "export", args: "DIR", summary: "export a persona folder as a Character Card V3 PNG", setup: personaExport,
			example: []string{"./Seraphina", "--out", "card.png"}},

		{noun: "bench", name: "locomo", args: "FILE", summary: "recall@k on a LoCoMo file, in a scratch store (no daemon); --folds K cross-validates by conversation", setup: benchLoCoMo,
			more: benchLoCoMoMore, example: []string{"locomo10.json"}},
		{noun: "bench", name: "recall", summary: "recall latency and index build rate on a synthetic history", setup: benchRecall,
			example: []string{"--messages", "100000"}},

		{noun: "bench", name: "crash", summary: "kill -9 the daemon at random moments while two clients talk, and check that nothing acknowledged is lost", setup: benchCrash,
			more: benchCrashMore, example: []string{"--cycles", "500"}},

		{noun: "service", name: "status", summary: "say whether cyan is installed as a service, and whether it runs", setup: serviceStatus},
		{noun: "service", name: "install", summary: "install cyan as a service of your login, started with it and again when it fails", setup: serviceInstall,
			more: serviceMore},
		{noun: "service", name: "uninstall", summary: "stop the service and remove it", setup: serviceUninstall},

		{noun: "config", name: "check", summary: "validate the configuration and print it, secrets masked", setup: configCheck},
	}
}

// Main runs the command line and returns the exit status.
func Main(args []string, io IO) int {
	if io.Env == nil {
		io.Env = os.Getenv
	}
	if io.Stdin == nil {
		io.Stdin = eofReader{}
	}
	table := commands()
	v, rest, err := find(table, args)
	if err != nil {
		return findFailed(io, err)
	}
	f := newFlags(v)
	r := v.setup(f)
	pos, err := f.parse(rest)
	switch {
	case errors.Is(err, flag.ErrHelp):
		f.help(io.Stdout)
		return exitOK
	case err == nil:
		err = v.checkArgs(pos)
	}
	if err == nil {
		err = r(io, pos)
	}
	return finish(io, v, err)
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

func loadConfig(io IO) (*config.Config, error) {
	return config.Load(io.Env)
}

// dial loads the configuration and makes a client of the daemon it names.
func dial(io IO) (*client, *config.Config, error) {
	cfg, err := loadConfig(io)
	if err != nil {
		return nil, nil, err
	}
	return newClient(cfg), cfg, nil
}
