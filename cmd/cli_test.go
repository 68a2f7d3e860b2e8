package cmd

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"
)

func TestParseArgsInterspersed(t *testing.T) {
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
			var stderr bytes.Buffer
			fs := newFlags(IO{Stderr: &stderr}, "send")
			ch := fs.String("channel", "terminal", "")
			pos, err := parseArgs(fs, tt.args)
			var ue *usageError
			if tt.usage {
				if !errors.As(err, &ue) {
					t.Fatalf("err = %v, want a usage error", err)
				}
				return
			}
			if err != nil || *ch != tt.channel || strings.Join(pos, "|") != strings.Join(tt.pos, "|") {
				t.Fatalf("parseArgs(%q) = %q, channel %q, %v", tt.args, pos, *ch, err)
			}
		})
	}
	fs := newFlags(IO{Stderr: new(bytes.Buffer)}, "send")
	if _, err := parseArgs(fs, []string{"--help"}); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("--help: %v", err)
	}
}

func TestMainExitCodes(t *testing.T) {
	run := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := Main(args, IO{Stdout: &out, Stderr: &errb, Env: func(string) string { return "" }})
		return code, out.String() + errb.String()
	}
	if code, out := run(); code != 0 || !strings.Contains(out, "Commands:") {
		t.Errorf("no args: %d %q", code, out)
	}
	if code, _ := run("nope"); code != 2 {
		t.Errorf("unknown command: %d", code)
	}
	if code, out := run("send"); code != 2 || !strings.Contains(out, "no message text") {
		t.Errorf("send without text: %d %q", code, out)
	}
	if code, out := run("config", "frob"); code != 2 || !strings.Contains(out, "cyan config check") {
		t.Errorf("config frob: %d %q", code, out)
	}
	for _, bad := range [][]string{
		{"events"}, {"events", "frob"}, {"events", "ls", "--level", "decade"}, {"events", "rollup", "--now", "tomorrow"},
		{"events", "ls", "extra"}, {"objects"}, {"objects", "rm"}, {"relations", "ls", "x"},
	} {
		if code, out := run(bad...); code != 2 || !strings.Contains(out, "cyan "+bad[0]) {
			t.Errorf("%q: %d %q", bad, code, out)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"recall"}, "no query"},
		{[]string{"recall", "--mode", "guess", "x"}, "--mode"},
		{[]string{"recall", "--k", "0", "x"}, "--k"},
		{[]string{"import"}, "name one file"},
		{[]string{"import", "a", "b"}, "name one file"},
		{[]string{"bench"}, "name a benchmark"},
		{[]string{"bench", "speed"}, "unknown benchmark"},
		{[]string{"bench", "locomo"}, "name the LoCoMo file"},
		{[]string{"bench", "locomo", "--k", "5,x", "f.json"}, "--k"},
		{[]string{"bench", "recall", "--index", "faiss"}, "--index"},
	} {
		if code, out := run(tc.args...); code != 2 || !strings.Contains(out, tc.want) {
			t.Errorf("%v: %d %q, want exit 2 mentioning %q", tc.args, code, out, tc.want)
		}
	}
	if code, out := run("version"); code != 0 || !strings.HasPrefix(out, "cyan ") {
		t.Errorf("version: %d %q", code, out)
	}
}
