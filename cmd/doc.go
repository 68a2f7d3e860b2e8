// Package cmd is cyan's command line: serve runs the daemon; the other
// commands talk to a running daemon over its HTTP API or work on the setup
// alone (doctor, config, say, script, persona, bench, service, version);
// backup and export ask the daemon when one runs and read the data dir
// when none does, and restore and repair work on a data dir no daemon
// holds. cmd/cyan is a thin main around Main.
//
// # The grammar
//
// Every command is one row of one table (commands, in cli.go), and the
// dispatcher, the help, the exit statuses and the tests all read that row:
//
//   - Resources are "cyan NOUN VERB [flags] [arguments]": memory ls, memory
//     show ID, approvals allow ID, events rollup. A noun given alone — or
//     followed only by flags — runs its ls ("cyan memory" is "cyan memory
//     ls", "cyan trace --channel home" is "cyan trace ls --channel home").
//     A noun without ls (config, script run|check…) needs its verb. Nouns
//     are plural where they name a collection the daemon keeps (observers,
//     bridges, approvals, events, objects, relations, theories) and singular where
//     they name a kind of thing or a subsystem (memory, tool, trace,
//     history, script, persona, bench, config).
//   - Single-word actions stay single words: serve, chat, send, recall,
//     import, say, doctor, version, help.
//   - Flags may come before, between or after the positional arguments;
//     everything after "--" is positional. Help names a flag --name; the
//     flag package accepts -name too.
//   - One "how many" flag: -n/--limit N, defined with flags.limit(def, most,
//     usage), which checks 1..most. (bench locomo's --k is the list of k of
//     recall@k, a parameter of the metric, not a count of results.)
//   - --json, defined with flags.json(), on every verb that prints data:
//     it prints exactly one JSON document on stdout and nothing else there;
//     without it the output is text for people (tables, lines). serve,
//     chat and say, which run, stream or play, have none.
//   - Progress goes to stderr, as a redrawn bar only when stderr is a
//     terminal and as plain lines otherwise (progress.go).
//   - Help: "cyan help" lists everything, "cyan help NOUN" (or "cyan NOUN
//     --help") a noun's verbs, "cyan NOUN VERB --help" a verb's usage,
//     every flag, the example; "cyan help --json" is the whole table for
//     scripts. Help goes to stdout and exits 0.
//
// # Exit statuses
//
//	0  ok
//	1  the operation failed: the daemon refused (404, 429, 5xx), a tool
//	   call was refused, is waiting for approval or failed, a check
//	   (doctor, config check, script check) found a problem
//	2  bad usage or input: an unknown command, verb or flag, a bad flag
//	   value, missing or extra arguments, a file that does not exist or
//	   does not parse, arguments that are not JSON, a request the daemon
//	   calls invalid (400, 413, 422)
//	3  the daemon is not reachable: the message names the address and says
//	   to run 'cyan serve'
//
// A run function returns an error and never prints its own "cyan x:"
// prefix: finish (grammar.go) prints "cyan NOUN VERB: message" once and
// picks the status from the error's type — usageError (2, with the usage
// line), inputError or badInput (2), noDaemonError (3, from the client),
// apiError by status, anything else 1.
//
// # Adding a command
//
// Write a setup function in the file of its noun: it defines the flags and
// returns what runs once they are parsed.
//
//	func widgetsLs(f *flags) run {
//		limit := f.limit(20, 1000, "list the newest `N` widgets")
//		asJSON := f.json()
//		return func(io IO, args []string) error {
//			c, _, err := dial(io) // daemon verbs only
//			…
//		}
//	}
//
// Then add its row to commands() (and the noun to nouns() when it is new):
//
//	{noun: "widgets", name: "ls", summary: "list the widgets", daemon: true,
//		setup: widgetsLs, example: []string{"-n", "5"}},
//
// The dispatcher checks the count of positional arguments against args
// ("ID", "[ID]", "FILE...", "NAME [ARGS_JSON]") before run is called. The
// example must work: TestEveryVerb runs every row's --help, a bad flag and
// (for daemon verbs) the example against a stopped daemon; the end-to-end
// TestEveryVerbPrintsJSON runs it with --json against a running one — give
// it a recipe there when it needs an id only a running daemon has.
//
// It may import every cyan package.
package cmd
