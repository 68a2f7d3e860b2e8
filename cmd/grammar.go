package cmd

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// verb is one row of the command table: a resource's verb ("memory ls")
// or a single-word action ("send"). The dispatcher, the help, the exit
// codes and the table test all read it; doc.go says how to add one.
type verb struct {
	noun string // the resource ("memory"); "" for an action
	name string // the verb ("ls"); an action's own name
	// args are the positional arguments as help shows them, and the
	// dispatcher checks their count from it: "ID" one, "[ID]" at most one,
	// "TEXT..." one or more, "[FILE...]" any, "" none.
	args    string
	summary string // what it does: one line, lower case, no full stop
	// more is help's longer explanation (optional).
	more string
	// example is a working example's arguments after "cyan NOUN VERB":
	// help prints it, the table test runs it against a stopped daemon and
	// the end-to-end test with --json against a running one.
	example []string
	daemon  bool // it talks to the running daemon: exit 3 when none answers
	// setup defines the verb's flags on f and returns what runs once they
	// are parsed.
	setup func(f *flags) run
}

// run does a verb's work with its positional arguments.
type run func(io IO, args []string) error

// noun is a resource: the nouns of the command table, with what they are.
type noun struct {
	name    string
	summary string
	// more are rows its help lists after the verbs, under a heading
	// (the registered platforms, the voices); nil: none.
	more func() (heading string, rows [][2]string)
}

// path is how the verb is typed: "memory ls", or "send".
func (v *verb) path() string {
	if v.noun == "" {
		return v.name
	}
	return v.noun + " " + v.name
}

// arity is how many positional arguments args allows; most is -1 when
// there is no bound.
func (v *verb) arity() (least, most int) {
	for _, a := range strings.Fields(v.args) {
		optional := strings.HasPrefix(a, "[")
		many := strings.HasSuffix(strings.TrimSuffix(a, "]"), "...")
		if !optional {
			least++
		}
		switch {
		case many:
			most = -1
		case most >= 0:
			most++
		}
	}
	return least, most
}

// checkArgs says what is wrong with the count of positional arguments.
func (v *verb) checkArgs(pos []string) error {
	least, most := v.arity()
	switch {
	case len(pos) < least:
		msg := "missing arguments: it takes " + v.args
		if len(v.example) > 0 {
			msg += "; e.g. cyan " + v.path() + " " + shellJoin(v.example)
		}
		return &usageError{msg: msg}
	case most >= 0 && len(pos) > most && most == 0:
		return &usageError{msg: fmt.Sprintf("unexpected argument %q (it takes none)", pos[0])}
	case most >= 0 && len(pos) > most:
		return &usageError{msg: fmt.Sprintf("unexpected argument %q (it takes %s)", pos[most], v.args)}
	}
	return nil
}

// usageError is a mistake in the command line: exit 2, with the usage
// line.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// inputError is input the command cannot use — a file that does not
// exist or does not parse, arguments that are not JSON: exit 2, without
// the usage line.
type inputError struct{ err error }

func (e *inputError) Error() string { return e.err.Error() }
func (e *inputError) Unwrap() error { return e.err }

// badInput makes an inputError.
func badInput(format string, a ...any) error { return &inputError{fmt.Errorf(format, a...)} }

// noDaemonError: nothing answers at the daemon's address (exit 3).
type noDaemonError struct{ base string }

func (e *noDaemonError) Error() string {
	return fmt.Sprintf("no daemon answers at %s; start one with 'cyan serve' (or set CYAN_ADDR to where it listens)", e.base)
}

// reported is an error whose explanation the command has already printed;
// only the exit status is left to give.
type reported struct{ code int }

func (e *reported) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// Exit statuses: one table for every command (doc.go).
const (
	exitOK      = 0
	exitFailed  = 1
	exitUsage   = 2
	exitNoServe = 3
)

var exitCodes = []struct {
	Code    int    `json:"code"`
	Meaning string `json:"meaning"`
}{
	{exitOK, "ok"},
	{exitFailed, "the operation failed (a tool refused or failed, a check failed, the daemon refused)"},
	{exitUsage, "bad usage or input (an unknown verb or flag, missing arguments, a file that cannot be read)"},
	{exitNoServe, "the daemon is not reachable (run 'cyan serve')"},
}

// finish prints err the one way every command does and returns the exit
// status.
func finish(io IO, v *verb, err error) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	var (
		ue *usageError
		ie *inputError
		nd *noDaemonError
		ae *apiError
		rp *reported
	)
	switch {
	case errors.As(err, &rp):
		return rp.code
	case errors.As(err, &ue):
		fmt.Fprintf(io.Stderr, "cyan %s: %s\n", v.path(), message(v, ue))
		fmt.Fprintf(io.Stderr, "Usage: %s\nRun 'cyan %s --help' for more.\n", usageLine(v), v.path())
		return exitUsage
	case errors.As(err, &ie):
		fmt.Fprintf(io.Stderr, "cyan %s: %s\n", v.path(), message(v, err))
		return exitUsage
	case errors.As(err, &nd):
		fmt.Fprintf(io.Stderr, "cyan %s: %s\n", v.path(), message(v, err))
		return exitNoServe
	case errors.As(err, &ae) && (ae.Status == 400 || ae.Status == 413 || ae.Status == 422):
		fmt.Fprintf(io.Stderr, "cyan %s: %s\n", v.path(), message(v, err))
		return exitUsage
	}
	fmt.Fprintf(io.Stderr, "cyan %s: %s\n", v.path(), message(v, err))
	return exitFailed
}

// message is an error's text without a prefix the line already has: an
// error never reads "cyan x: cyan x: …".
func message(v *verb, err error) string {
	s := err.Error()
	for _, p := range []string{"cyan " + v.path() + ": ", "cyan " + v.noun + ": ", "cyan: "} {
		s = strings.TrimPrefix(s, p)
	}
	return s
}

// flags is a verb's flag set, with the helpers that keep the command line
// one voice: json (--json) and limit (-n/--limit).
type flags struct {
	*flag.FlagSet
	v *verb
	// alias maps a long flag to its one-letter alias ("limit" → "n").
	alias map[string]string
}

func newFlags(v *verb) *flags {
	fs := flag.NewFlagSet(v.path(), flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors and help are printed by finish and help
	fs.Usage = func() {}
	return &flags{FlagSet: fs, v: v, alias: map[string]string{}}
}

// json defines --json: the verb prints one JSON document instead of text
// for people.
func (f *flags) json() *bool {
	return f.Bool("json", false, "print JSON (one document) instead of text for people")
}

// limit defines -n and --limit, the one "how many" flag: a number from 1
// to most, def when not given.
func (f *flags) limit(def, most int, usage string) *int {
	p := new(int)
	*p = def
	v := &limitValue{p: p, most: most}
	f.Var(v, "limit", fmt.Sprintf("%s (1–%d)", usage, most))
	f.Var(v, "n", "the same as --limit")
	f.alias["limit"] = "n"
	return p
}

type limitValue struct {
	p    *int
	most int
}

func (l *limitValue) String() string {
	if l == nil || l.p == nil {
		return ""
	}
	return strconv.Itoa(*l.p)
}

func (l *limitValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > l.most {
		return fmt.Errorf("want a number from 1 to %d", l.most)
	}
	*l.p = n
	return nil
}

// isAlias reports whether name is only another name of a long flag.
func (f *flags) isAlias(name string) bool {
	for _, a := range f.alias {
		if a == name {
			return true
		}
	}
	return false
}

// parse parses flags that may come before, between or after the
// positional arguments ("cyan send --channel C TEXT" and "cyan send TEXT
// --channel C"); everything after "--" is positional.
func (f *flags) parse(args []string) ([]string, error) {
	var pos []string
	for {
		if err := f.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			msg := flagName.ReplaceAllStringFunc(err.Error(), func(m string) string {
				name := strings.TrimPrefix(m, "flag -")
				if len(name) == 1 {
					return "-" + name
				}
				return "--" + name
			})
			if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
				msg = fmt.Sprintf("unknown flag --%s", name)
				if retired[name] && f.Lookup("limit") != nil {
					msg += " (how many is -n/--limit now)"
				}
			}
			return nil, &usageError{msg: msg}
		}
		rest := f.Args()
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

// flagName is how the flag package names a flag in its errors ("flag
// -limit"); cyan says --limit.
var flagName = regexp.MustCompile(`flag -[A-Za-z0-9_-]+`)

// numRange is the range a limit's usage ends with: "(1–1000)".
var numRange = regexp.MustCompile(`\(\d+–\d+\)$`)

// retired are the "how many" flags -n/--limit replaced.
var retired = map[string]bool{"k": true, "last": true, "turns": true}

// flagInfo is one flag as help lists it.
type flagInfo struct {
	Name    string `json:"name"`
	Alias   string `json:"alias,omitempty"`
	Arg     string `json:"arg,omitempty"` // the value's placeholder; "" for a switch
	Usage   string `json:"usage"`
	Default string `json:"default,omitempty"`
}

// list is the verb's flags in name order, aliases folded into their long
// flag.
func (f *flags) list() []flagInfo {
	var out []flagInfo
	f.VisitAll(func(fl *flag.Flag) {
		if f.isAlias(fl.Name) {
			return
		}
		arg, usage := flag.UnquoteUsage(fl)
		switch {
		case isBool(fl):
			arg = ""
		case arg == "value" || arg == "":
			arg = "N"
		default:
			arg = strings.ToUpper(arg)
		}
		def := fl.DefValue
		if def == "false" || def == "0" || def == "0s" {
			def = ""
		}
		out = append(out, flagInfo{Name: fl.Name, Alias: f.alias[fl.Name], Arg: arg, Usage: usage, Default: def})
	})
	return out
}

func isBool(fl *flag.Flag) bool {
	b, ok := fl.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// usageLine is "cyan NOUN VERB [flags] ARGS".
func usageLine(v *verb) string {
	s := "cyan " + v.path() + " [flags]"
	if v.args != "" {
		s += " " + v.args
	}
	return s
}

// help writes the verb's full help: usage, what it does, every flag, an
// example.
func (f *flags) help(w io.Writer) {
	v := f.v
	fmt.Fprintf(w, "Usage: %s\n\n%s.\n", usageLine(v), upperFirst(v.summary))
	if v.more != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(v.more))
	}
	if v.noun != "" && v.name == "ls" {
		fmt.Fprintf(w, "\n'cyan %s' alone does the same (ls is the default verb).\n", v.noun)
	}
	if v.daemon {
		fmt.Fprintln(w, "\nIt talks to the running daemon ('cyan serve'); exit status 3 when none answers.")
	}
	if fl := f.list(); len(fl) > 0 {
		fmt.Fprintln(w, "\nFlags:")
		rows := make([][2]string, len(fl))
		width := 0
		for i, x := range fl {
			name := "    --" + x.Name
			if x.Alias != "" {
				name = "-" + x.Alias + ", --" + x.Name
			}
			if x.Arg != "" {
				name += " " + x.Arg
			}
			usage := x.Usage
			switch {
			case x.Default != "" && numRange.MatchString(usage):
				usage = strings.TrimSuffix(usage, ")") + "; default " + x.Default + ")"
			case x.Default != "":
				usage += " (default " + x.Default + ")"
			}
			rows[i] = [2]string{name, usage}
			width = max(width, len(name))
		}
		for _, r := range rows {
			fmt.Fprintf(w, "  %-*s  %s\n", width, r[0], r[1])
		}
	}
	if len(v.example) > 0 {
		fmt.Fprintf(w, "\nExample:\n  cyan %s %s\n", v.path(), shellJoin(v.example))
	}
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	return strings.ToUpper(string(r[0])) + string(r[1:])
}

// shellJoin quotes arguments the way a shell reads them back.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a != "" && !strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}

// find resolves the command line to a verb of the table and the
// arguments left for it. A noun alone, or followed by a flag, is its
// default verb ls; "cyan NOUN help" is the noun's help.
func find(table []verb, args []string) (*verb, []string, error) {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		return lookup(table, "", "help"), nil, nil
	}
	first, rest := args[0], args[1:]
	if v := lookup(table, "", first); v != nil {
		return v, rest, nil
	}
	verbs := verbsOf(table, first)
	if len(verbs) == 0 {
		return nil, nil, &usageError{msg: fmt.Sprintf("unknown command %q", first)}
	}
	if len(rest) > 0 {
		if v := lookup(table, first, rest[0]); v != nil {
			return v, rest[1:], nil
		}
		if rest[0] == "help" || rest[0] == "-h" || rest[0] == "--help" {
			return lookup(table, "", "help"), []string{first}, nil
		}
	}
	if len(rest) == 0 || strings.HasPrefix(rest[0], "-") {
		if v := lookup(table, first, "ls"); v != nil {
			return v, rest, nil
		}
		return nil, nil, &nounError{noun: first, msg: "say what to do: " + verbList(verbs, first)}
	}
	msg := fmt.Sprintf("unknown verb %q; %s", rest[0], verbList(verbs, first))
	if lookup(table, first, "show") != nil {
		msg += fmt.Sprintf(" (to see one: cyan %s show %s)", first, rest[0])
	}
	return nil, nil, &nounError{noun: first, msg: msg}
}

// nounError is a usage mistake at the noun: no or an unknown verb.
type nounError struct{ noun, msg string }

func (e *nounError) Error() string { return e.msg }

func lookup(table []verb, noun, name string) *verb {
	for i := range table {
		if table[i].noun == noun && table[i].name == name {
			return &table[i]
		}
	}
	return nil
}

func verbsOf(table []verb, noun string) []*verb {
	var out []*verb
	for i := range table {
		if table[i].noun == noun {
			out = append(out, &table[i])
		}
	}
	return out
}

func verbList(verbs []*verb, noun string) string {
	var s []string
	for _, v := range verbs {
		x := "cyan " + noun + " " + v.name
		if v.args != "" {
			x += " " + v.args
		}
		s = append(s, x)
	}
	return strings.Join(s, " | ")
}

// nounsOf lists the table's nouns in the table's order.
func nounsOf(table []verb) []string {
	var out []string
	for _, v := range table {
		if v.noun != "" && !slices.Contains(out, v.noun) {
			out = append(out, v.noun)
		}
	}
	return out
}
