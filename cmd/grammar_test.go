package cmd

import (
	"encoding/json"
	"flag"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestEveryVerb runs every row of the command table — so a new verb is
// tested the day it is added — with --help (exit 0; the help names each of
// its flags), with an unknown flag (exit 2, the usage line) and, when it
// talks to the daemon, its example against a stopped one (exit 3, saying to
// run cyan serve and where). The end-to-end test runs each with --json
// against a running daemon (internal/e2e TestEveryVerbPrintsJSON).
func TestEveryVerb(t *testing.T) {
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stopped := l.Addr().String() // nothing listens here once closed
	l.Close()
	env := map[string]string{"CYAN_DATA_DIR": filepath.Join(dir, "data"), "CYAN_ADDR": stopped, "HOME": dir}
	// The examples' files, for the verbs that read one before they call.
	t.Chdir(dir)
	if err := os.WriteFile("history.jsonl", []byte(`{"time": "2025-01-02T10:00:00Z", "channel": "home", "user": "nyalia", "text": "hi"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	table := commands()
	for i := range table {
		v := &table[i]
		path := strings.Fields(v.path())
		t.Run(v.path(), func(t *testing.T) {
			code, out, errs := runCmd(env, append(path, "--help")...)
			if code != 0 || errs != "" || !strings.HasPrefix(out, "Usage: cyan "+v.path()) {
				t.Fatalf("--help: exit %d, stderr %q\n%s", code, errs, out)
			}
			f := newFlags(v)
			v.setup(f)
			f.VisitAll(func(fl *flag.Flag) {
				name := "--" + fl.Name
				if f.isAlias(fl.Name) {
					name = "-" + fl.Name + ", --"
				}
				if !strings.Contains(out, name) {
					t.Errorf("the help does not name %s:\n%s", name, out)
				}
				if fl.Usage == "" {
					t.Errorf("flag %s has no usage text", fl.Name)
				}
			})

			code, out, errs = runCmd(env, append(path, "--no-such-flag")...)
			if code != 2 || out != "" || !strings.Contains(errs, "cyan "+v.path()+": unknown flag --no-such-flag") || !strings.Contains(errs, "Usage: cyan "+v.path()) {
				t.Fatalf("a bad flag: exit %d, stdout %q, stderr %q", code, out, errs)
			}

			least, _ := v.arity()
			if least > 0 && len(v.example) == 0 {
				t.Fatalf("%s takes %s but has no example", v.path(), v.args)
			}
			if !v.daemon {
				return
			}
			args := path
			if f.Lookup("retry-for") != nil {
				// Against a stopped daemon cyan import retries for 30 s;
				// its retries are the e2e tests' (TestImportSurvivesADaemonRestart,
				// TestImportSaysTheDaemonStopped), the answer here.
				args = append(slices.Clone(path), "--retry-for", "0s")
			}
			code, out, errs = runCmd(env, append(args, v.example...)...)
			if code != 3 || !strings.Contains(errs, "cyan serve") || !strings.Contains(errs, stopped) {
				t.Fatalf("against a stopped daemon: exit %d, stdout %q, stderr %q", code, out, errs)
			}
			if doubled.MatchString(errs) {
				t.Fatalf("doubled prefix: %q", errs)
			}
		})
	}
}

// TestCommandTable: the table is one voice — nouns known, no duplicates,
// every summary lower case and short, -n/--limit the only "how many".
func TestCommandTable(t *testing.T) {
	table := commands()
	var known []string
	for _, n := range nouns() {
		known = append(known, n.name)
		if len(verbsOf(table, n.name)) == 0 {
			t.Errorf("noun %s has no verbs", n.name)
		}
	}
	seen := map[string]bool{}
	for i := range table {
		v := &table[i]
		if seen[v.path()] {
			t.Errorf("%s is in the table twice", v.path())
		}
		seen[v.path()] = true
		if v.noun != "" && !slices.Contains(known, v.noun) {
			t.Errorf("%s: noun %q is not in nouns()", v.path(), v.noun)
		}
		if v.noun == "" && slices.Contains(known, v.name) {
			t.Errorf("action %s has a noun's name", v.name)
		}
		if v.summary == "" || strings.HasSuffix(v.summary, ".") || upperFirst(v.summary) == v.summary {
			t.Errorf("%s: the summary %q should be one lower-case line without a full stop", v.path(), v.summary)
		}
		f := newFlags(v)
		v.setup(f)
		for name := range retired {
			if f.Lookup(name) != nil && v.path() != "bench locomo" { // bench locomo's --k is recall@k's list of k
				t.Errorf("%s defines --%s; the one \"how many\" flag is -n/--limit", v.path(), name)
			}
		}
	}
}

// TestHelpJSON: cyan help --json is the table, for scripts and the
// end-to-end test.
func TestHelpJSON(t *testing.T) {
	code, out, _ := runCmd(map[string]string{"CYAN_DATA_DIR": t.TempDir()}, "help", "--json")
	var doc struct {
		Commands []verbJSON `json:"commands"`
		Exit     []struct {
			Code int `json:"code"`
		} `json:"exit_codes"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || len(doc.Commands) != len(commands()) || len(doc.Exit) != 4 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for _, c := range doc.Commands {
		if c.Command == "memory curve" && (!c.JSON || !c.Daemon || c.Flags[1].Name != "limit" || c.Flags[1].Alias != "n") {
			t.Fatalf("memory curve: %+v", c)
		}
	}
}
