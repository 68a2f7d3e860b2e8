package cmd

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// helpCmd is "cyan help [NOUN [VERB] | ACTION]"; with --json, the whole
// command table for scripts and completions.
func helpCmd(f *flags) run {
	asJSON := f.json()
	return func(io IO, args []string) error {
		table := commands()
		if *asJSON {
			return printJSON(io.Stdout, tableJSON(table))
		}
		if len(args) == 0 {
			printHelp(io.Stdout, table)
			return nil
		}
		if len(args) > 2 {
			return &usageError{msg: "name one command: cyan help NOUN [VERB], or cyan help ACTION"}
		}
		if v := lookup(table, "", args[0]); v != nil && len(args) == 1 {
			v.help(io.Stdout)
			return nil
		}
		if len(verbsOf(table, args[0])) == 0 {
			return &usageError{msg: fmt.Sprintf("unknown command %q; 'cyan help' lists them", args[0])}
		}
		if len(args) == 2 {
			v := lookup(table, args[0], args[1])
			if v == nil {
				return &usageError{msg: fmt.Sprintf("unknown verb %q; %s", args[1], verbList(verbsOf(table, args[0]), args[0]))}
			}
			v.help(io.Stdout)
			return nil
		}
		nounHelp(io.Stdout, table, args[0])
		return nil
	}
}

// help writes the verb's full help.
func (v *verb) help(w io.Writer) {
	f := newFlags(v)
	v.setup(f)
	f.help(w)
}

// findFailed reports a command line that names no verb of the table.
func findFailed(io IO, err error) int {
	var ne *nounError
	if errors.As(err, &ne) {
		fmt.Fprintf(io.Stderr, "cyan %s: %s\nRun 'cyan help %s' for its verbs.\n", ne.noun, ne.msg, ne.noun)
		return exitUsage
	}
	fmt.Fprintf(io.Stderr, "cyan: %s\nRun 'cyan help' for the commands.\n", err)
	return exitUsage
}

func printHelp(w io.Writer, table []verb) {
	fmt.Fprint(w, `cyan — a persistent companion-agent daemon.

Usage: cyan ACTION [flags] [arguments]
       cyan NOUN [VERB] [flags] [arguments]   (VERB is ls when left out)

Actions:
`)
	var actions [][2]string
	for _, v := range table {
		if v.noun == "" {
			actions = append(actions, [2]string{v.name + argsSuffix(v.args), v.summary})
		}
	}
	writeRows(w, actions)
	fmt.Fprintln(w, "\nResources (cyan NOUN VERB):")
	var res [][2]string
	summaries := map[string]string{}
	for _, n := range nouns() {
		summaries[n.name] = n.summary
	}
	for _, n := range nounsOf(table) {
		var vs []string
		for _, v := range verbsOf(table, n) {
			vs = append(vs, v.name)
		}
		res = append(res, [2]string{n + " " + strings.Join(vs, "|"), summaries[n]})
	}
	writeRows(w, res)
	fmt.Fprint(w, `
Flags go anywhere after the verb. Every list takes -n/--limit N where it has a
"how many", and every command that prints data takes --json.

Exit status:
`)
	for _, e := range exitCodes {
		fmt.Fprintf(w, "  %d  %s\n", e.Code, e.Meaning)
	}
	fmt.Fprint(w, `
Environment: CYAN_DATA_DIR, CYAN_CONFIG, CYAN_ADDR, CYAN_LLM_PROVIDER, CYAN_LLM_BASE_URL, CYAN_LLM_MODEL, CYAN_LLM_API_KEY.
Run 'cyan help NOUN' for a resource's verbs, 'cyan NOUN VERB --help' for a verb's flags.
`)
}

// nounHelp lists a noun's verbs.
func nounHelp(w io.Writer, table []verb, n string) {
	var this noun
	for _, x := range nouns() {
		if x.name == n {
			this = x
		}
	}
	summary := this.summary
	fmt.Fprintf(w, "Usage: cyan %s VERB [flags] [arguments]\n\n%s.\n\nVerbs:\n", n, upperFirst(summary))
	var rows [][2]string
	for _, v := range verbsOf(table, n) {
		s := v.summary
		if v.name == "ls" {
			s += " (the default)"
		}
		rows = append(rows, [2]string{v.name + argsSuffix(v.args), s})
	}
	writeRows(w, rows)
	if this.more != nil {
		heading, more := this.more()
		fmt.Fprintf(w, "\n%s:\n", heading)
		writeRows(w, more)
	}
	fmt.Fprintf(w, "\nRun 'cyan %s VERB --help' for a verb's flags.\n", n)
}

func argsSuffix(a string) string {
	if a == "" {
		return ""
	}
	return " " + a
}

func writeRows(w io.Writer, rows [][2]string) {
	width := 0
	for _, r := range rows {
		width = max(width, len([]rune(r[0])))
	}
	for _, r := range rows {
		fmt.Fprintf(w, "  %s%s  %s\n", r[0], strings.Repeat(" ", width-len([]rune(r[0]))), r[1])
	}
}

// verbJSON is a row of the command table as "cyan help --json" prints it.
type verbJSON struct {
	Command string     `json:"command"` // "memory show", "send"
	Noun    string     `json:"noun,omitempty"`
	Verb    string     `json:"verb"`
	Args    string     `json:"args,omitempty"`
	Summary string     `json:"summary"`
	Default bool       `json:"default,omitempty"` // the noun's default verb
	Daemon  bool       `json:"daemon"`
	JSON    bool       `json:"json"` // takes --json
	Example []string   `json:"example,omitempty"`
	Flags   []flagInfo `json:"flags"`
}

func tableJSON(table []verb) any {
	var out []verbJSON
	for i := range table {
		v := &table[i]
		f := newFlags(v)
		v.setup(f)
		fl := f.list()
		if fl == nil {
			fl = []flagInfo{}
		}
		out = append(out, verbJSON{Command: v.path(), Noun: v.noun, Verb: v.name, Args: v.args, Summary: v.summary,
			Default: v.noun != "" && v.name == "ls", Daemon: v.daemon, JSON: f.Lookup("json") != nil, Example: v.example, Flags: fl})
	}
	return map[string]any{"commands": out, "exit_codes": exitCodes}
}
