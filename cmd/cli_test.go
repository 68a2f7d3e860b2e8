package cmd

import (
	"bytes"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
)

func TestParseInterspersed(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		channel string
		pos     []string
		usage   bool
	}{
		{"flags first", []string{"--channel", "c", "hello", "there"}, "c", []string{"hello", "there"}, false},
		{"flags last", []string{"hello", "--channel", "c"}, "c", []string{"hello"}, false},
		{"flags between", []string{"a", "--channel=c", "b"}, "c", []string{"a", "b"}, false},
		{"double dash keeps dashes", []string{"--channel", "c", "--", "--not-a-flag", "x"}, "c", []string{"--not-a-flag", "x"}, false},
		{"default", []string{"text"}, "terminal", []string{"text"}, false},
		{"unknown flag", []string{"text", "--bogus"}, "", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFlags(&verb{name: "send"})
			ch := f.String("channel", "terminal", "")
			pos, err := f.parse(tt.args)
			if tt.usage {
				if _, ok := err.(*usageError); !ok {
					t.Fatalf("err = %v, want a usage error", err)
				}
				return
			}
			if err != nil || *ch != tt.channel || strings.Join(pos, "|") != strings.Join(tt.pos, "|") {
				t.Fatalf("parse(%q) = %q, channel %q, %v", tt.args, pos, *ch, err)
			}
		})
	}
}

func TestArity(t *testing.T) {
	for _, tc := range []struct {
		args        string
		least, most int
	}{
		{"", 0, 0}, {"ID", 1, 1}, {"[ID]", 0, 1}, {"TEXT...", 1, -1}, {"[FILE...]", 0, -1},
		{"NAME [ARGS_JSON]", 1, 2}, {"OBJECT-ID BLOCK-ID", 2, 2},
	} {
		v := verb{args: tc.args}
		if l, m := v.arity(); l != tc.least || m != tc.most {
			t.Errorf("%q: arity %d..%d, want %d..%d", tc.args, l, m, tc.least, tc.most)
		}
	}
}

// TestMistakesSayWhatToDo: each wrong command line exits 2 and its message
// says what was wrong.
func TestMistakesSayWhatToDo(t *testing.T) {
	env := map[string]string{"CYAN_DATA_DIR": t.TempDir()}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"nope"}, `unknown command "nope"`},
		{[]string{"send"}, "missing arguments: it takes TEXT...; e.g. cyan send --channel home hello"},
		{[]string{"send", " "}, "the message text is empty"},
		{[]string{"config"}, "say what to do: cyan config check"},
		{[]string{"config", "frob"}, `unknown verb "frob"`},
		{[]string{"events", "frob"}, `unknown verb "frob"; cyan events ls | cyan events rollup`},
		{[]string{"events", "ls", "--level", "decade"}, "--level"},
		{[]string{"events", "rollup", "--now", "tomorrow"}, "RFC 3339"},
		{[]string{"events", "ls", "extra"}, `unexpected argument "extra" (it takes none)`},
		{[]string{"objects", "rm"}, `unknown verb "rm"`},
		{[]string{"relations", "ls", "x"}, `unexpected argument "x"`},
		{[]string{"trace", "0193abc"}, "cyan trace show 0193abc"},
		{[]string{"memory", "show"}, "missing arguments: it takes ID; e.g. cyan memory show w3"},
		{[]string{"memory", "show", "a", "b"}, `unexpected argument "b" (it takes ID)`},
		{[]string{"recall"}, "missing arguments"},
		{[]string{"recall", "--mode", "guess", "x"}, "--mode"},
		{[]string{"recall", "-n", "0", "x"}, "want a number from 1 to 64"},
		{[]string{"recall", "--k", "5", "x"}, "unknown flag --k (how many is -n/--limit now)"},
		{[]string{"trace", "--last", "5"}, "unknown flag --last (how many is -n/--limit now)"},
		{[]string{"history", "--limit", "many"}, `invalid value "many" for --limit: want a number from 1 to 1000`},
		{[]string{"import"}, "missing arguments"},
		{[]string{"import", "a", "b"}, `unexpected argument "b"`},
		{[]string{"import", "no-such-file.jsonl"}, "check the path"},
		{[]string{"import", "--format", "csv", "x"}, `--format "csv" is not jsonl, locomo or cyan`},
		{[]string{"bench"}, "say what to do: cyan bench locomo FILE | cyan bench recall"},
		{[]string{"bench", "speed"}, `unknown verb "speed"`},
		{[]string{"bench", "locomo"}, "missing arguments"},
		{[]string{"bench", "locomo", "--k", "5,x", "f.json"}, "--k"},
		{[]string{"bench", "recall", "--index", "faiss"}, "--index"},
		{[]string{"tool", "run", "x", "{not json"}, "are not JSON"},
		{[]string{"persona", "rename", "x"}, "cyan persona import [FILE]"},
		{[]string{"help", "frob"}, `unknown command "frob"`},
	} {
		code, out, errs := runCmd(env, tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) || out != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 saying %q", tc.args, code, out, errs, tc.want)
		}
		if doubled.MatchString(errs) {
			t.Errorf("%q: a doubled prefix in %q", tc.args, errs)
		}
	}
}

// doubled is an error line that names cyan twice before its message.
var doubled = regexp.MustCompile(`(?m)^cyan [a-z ]*: (cyan[a-z ]*:|error:)`)

func TestHelpAndVersion(t *testing.T) {
	env := map[string]string{"CYAN_DATA_DIR": t.TempDir()}
	for _, args := range [][]string{nil, {"help"}, {"-h"}, {"--help"}} {
		if code, out, _ := runCmd(env, args...); code != 0 || !strings.Contains(out, "Resources (cyan NOUN VERB):") || !strings.Contains(out, "3  the daemon is not reachable") {
			t.Errorf("%q: %d %q", args, code, out)
		}
	}
	for _, args := range [][]string{{"help", "memory"}, {"memory", "help"}, {"memory", "--help"}} {
		if code, out, _ := runCmd(env, args...); code != 0 || !strings.Contains(out, "curve ID") || !strings.Contains(out, "(the default)") {
			t.Errorf("%q: %d %q", args, code, out)
		}
	}
	if code, out, _ := runCmd(env, "help", "memory", "curve"); code != 0 || !strings.Contains(out, "Usage: cyan memory curve [flags] ID") {
		t.Errorf("help memory curve: %d %q", code, out)
	}
	code, out, _ := runCmd(env, "version")
	if code != 0 || !strings.HasPrefix(out, "cyan ") || !strings.Contains(out, "revision: ") || !strings.Contains(out, "go: go1.") {
		t.Errorf("version: %d %q", code, out)
	}
}

func TestVersionFromBuildInfo(t *testing.T) {
	bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/cyan-agent/cyan", Version: "v0.0.0-20261123122515-5546f6efa8d3+dirty"},
		Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "5546f6efa8d3791a5283d1965a242ae0fd7f4757"},
			{Key: "vcs.time", Value: "2026-11-23T12:25:15Z"}, {Key: "vcs.modified", Value: "true"}}}
	b := versionOf(bi, true)
	if b.Version != bi.Main.Version || b.Revision != "5546f6efa8d3791a5283d1965a242ae0fd7f4757" || !b.Modified || b.Time != "2026-11-23T12:25:15Z" {
		t.Fatalf("%+v", b)
	}
	if b := versionOf(&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true); b.Version != "dev" || b.Revision != "" {
		t.Fatalf("a build without VCS information: %+v", b)
	}
}

func TestVersionShort(t *testing.T) {
	for _, tc := range []struct {
		b    buildInfo
		want string
	}{
		{buildInfo{Version: "dev"}, "dev"},
		{buildInfo{Version: "dev", Revision: "0ee339d1a2b3c4d5", Modified: true}, "dev (0ee339d1a2b3, modified)"},
		{buildInfo{Version: "v0.0.0-20261123120600-0ee339d1a2b3", Revision: "0ee339d1a2b3c4d5"}, "v0.0.0-20261123120600-0ee339d1a2b3"},
		{buildInfo{Version: "v1.2.0", Revision: "0ee339d1a2b3c4d5"}, "v1.2.0 (0ee339d1a2b3)"},
	} {
		if got := tc.b.short(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.b, got, tc.want)
		}
	}
}

func TestProgressOnlyDrawsOnATerminal(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b, "import")
	for i := 1; i <= 100; i++ {
		p.show(float64(i)/100, i*10, false)
	}
	p.show(1, 1000, true)
	out := b.String()
	if strings.ContainsAny(out, "\r█░") {
		t.Fatalf("a bar was drawn into a pipe: %q", out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 10 || !strings.HasPrefix(lines[0], "import:  10%") || !strings.HasPrefix(lines[9], "import: 100%  1000 messages") {
		t.Fatalf("want a line at each tenth and one at the end:\n%s", out)
	}
}
