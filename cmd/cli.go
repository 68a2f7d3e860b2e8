package cmd

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/cyan-agent/cyan/config"
)

// Version is set at build time with -ldflags "-X github.com/cyan-agent/cyan/cmd.Version=…".
var Version = "dev"

// IO is what a command reads and writes; tests give their own.
type IO struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Env    config.Env
}

// command is one subcommand.
type command struct {
	name    string
	summary string
	usage   string // the arguments after the name
	run     func(io IO, args []string) error
}

// commands returns the table of subcommands, in help order.
func commands() []command {
	return []command{
		{"serve", "run the daemon (embedded storage; a local Ollama by default)", "", runServe},
		{"chat", "chat with the running daemon in the terminal, replies streamed", "", runChat},
		{"send", "send one message and print the replies", "TEXT", runSend},
		{"history", "print a channel's conversation", "", runHistory},
		{"trace", "show the last prompt packet of a channel (--channel) and the newest generate calls; with an ID, one call in full", "[ID]", runTrace},
		{"memory", "the workspace: ls [--all], show ID, forget ID (for good), curve ID (R over the coming turns)", "ls|show|forget|curve [ID]", runMemory},
		{"bridges", "the chat-app bridges: connected, bot, chats seen, queue, counters, last error", "[--json]", runBridges},
		{"observers", "the background observers: ls (triggers, last and next run, tokens spent / budget, state), run NAME", "ls|run [NAME]", runObservers},
		{"tool", "tool ls [--json] | run [--as SPEAKER] [--channel C] NAME 'ARGS_JSON' | check [--as SPEAKER] NAME 'ARGS_JSON'", "ls|run|check …", runTool},
		{"approvals", "list the tool calls waiting for your approval; approvals allow|deny ID answers one", "[allow|deny ID]", runApprovals},
		{"events", "list the event log (ls) or run every due rollup now (rollup)", "ls [--level L] [--channel C] [--json] | rollup [--now RFC3339]", runEvents},
		{"objects", "list the people, agents and things the companion knows, with their info blocks; confirm a block a conversation made", "ls [--json] | confirm OBJECT-ID BLOCK-ID", runObjects},
		{"relations", "list the relation lines between objects, with their weights now", "ls [--json]", runRelations},
		{"script", "run or check a prompt script (*.ai.yaml): script run [--input JSON] [--json] [--trace] FILE, script check FILE", "run|check …", runScript},
		{"recall", "search everything ever said (search mode), or let the model filter and summarise (tool mode)", "QUERY", runRecall},
		{"import", "import history (jsonl or a LoCoMo file) into the running daemon; importing twice adds nothing", "FILE", runImport},
		{"bench", "benchmarks: locomo FILE (recall@k on LoCoMo), recall --messages N (latency and index build rate)", "locomo|recall ...", runBench},
		{"doctor", "check the data dir, the config and the LLM, and say how to fix what fails", "", runDoctor},
		{"config", "config check: validate and print the effective configuration (secrets masked)", "check", runConfig},
		{"version", "print the version", "", runVersion},
	}
}

// usageError is a mistake in the command line (exit status 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// Main runs the command line and returns the exit status.
func Main(args []string, io IO) int {
	if io.Env == nil {
		io.Env = os.Getenv
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		printHelp(io.Stdout)
		return 0
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(io, args[1:])
		var ue *usageError
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		case errors.As(err, &ue):
			fmt.Fprintf(io.Stderr, "cyan %s: %s\nRun 'cyan %s --help' for usage.\n", c.name, ue.msg, c.name)
			return 2
		default:
			fmt.Fprintf(io.Stderr, "cyan %s: %s\n", c.name, err)
			return 1
		}
	}
	fmt.Fprintf(io.Stderr, "cyan: unknown command %q\n", args[0])
	printHelp(io.Stderr)
	return 2
}

func printHelp(w io.Writer) {
	fmt.Fprintln(w, "cyan — a persistent companion-agent daemon.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: cyan <command> [flags] [arguments]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	cs := commands()
	width := 0
	for _, c := range cs {
		width = max(width, len(c.name))
	}
	for _, c := range cs {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Environment: CYAN_DATA_DIR, CYAN_CONFIG, CYAN_ADDR, CYAN_LLM_PROVIDER, CYAN_LLM_BASE_URL, CYAN_LLM_MODEL, CYAN_LLM_API_KEY.")
	fmt.Fprintln(w, "Run 'cyan <command> --help' for a command's flags.")
}

// newFlags makes a command's flag set whose --help prints the summary.
func newFlags(io IO, name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Stderr)
	var c command
	for _, x := range commands() {
		if x.name == name {
			c = x
		}
	}
	fs.Usage = func() {
		fmt.Fprintf(io.Stderr, "Usage: cyan %s [flags] %s\n\n%s.\n", name, c.usage, strings.TrimSuffix(c.summary, "."))
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		if len(names) > 0 {
			sort.Strings(names)
			fmt.Fprintln(io.Stderr, "\nFlags:")
			fs.PrintDefaults()
		}
	}
	return fs
}

// parseArgs parses flags that may come before, between or after the
// positional arguments ("cyan send --channel C TEXT" and "cyan send TEXT
// --channel C"); everything after "--" is positional.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, &usageError{msg: err.Error()}
		}
		rest := fs.Args()
		consumed := len(args) - len(rest)
		if consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// parseNoArgs parses the flags of a command that takes no positional
// arguments.
func parseNoArgs(fs *flag.FlagSet, args []string) error {
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return &usageError{msg: fmt.Sprintf("unexpected argument %q", pos[0])}
	}
	return nil
}

func loadConfig(io IO) (*config.Config, error) {
	return config.Load(io.Env)
}
