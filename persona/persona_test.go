package persona

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

func TestDefault(t *testing.T) {
	p, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "青蓝" || p.Color != "#1D75B3" || p.Dir != "" {
		t.Errorf("Name %q, Color %q, Dir %q", p.Name, p.Color, p.Dir)
	}
	if p.ContextCount != 40 || p.MiniFullContextCount != 6 || p.WorkMode {
		t.Errorf("ContextCount %d, MiniFullContextCount %d, WorkMode %v", p.ContextCount, p.MiniFullContextCount, p.WorkMode)
	}
	if n := strings.Count(p.Reference, "\n") + 1; n < 20 || n > 30 {
		t.Errorf("reference corpus has %d lines, want 20 to 30", n)
	}

	tests := []struct {
		name     string
		extra    map[string]any
		want     []string
		dontWant []string
	}{
		{
			name: "work mode",
			extra: map[string]any{
				"work_mode": true, "developer_name": "kemo",
				"channel": "QQ group 42", "channel_kind": "group", "now": "2026-11-22 10:31",
			},
			want: []string{
				"I'm in work mode", "This is kemo, your developer.",
				"This conversation takes place in QQ group 42, a group channel.", "It is now 2026-11-22 10:31.",
			},
			dontWant: []string{"small talk", "${"},
		},
		{
			name:     "chat mode",
			extra:    map[string]any{"work_mode": false},
			want:     []string{"small talk"},
			dontWant: []string{"work mode", "your developer", "This conversation", "It is now", "${"},
		},
	}
	notation := []string{
		"# Notation & Syntax", "# Self-Definition", "# Few-shot", "# Tools", "# System Info",
		"`^alice [2026-11-22 10:31]: text`", "`^system [time]: text`", "`#name`", "backslash",
		"`%[path]`", "`%[path] Line n ~ Line m`", "`@br`", "`<empty_reply>`",
		"`@last_青蓝`", "`@last_n_青蓝`", "`workspace_usage`", "`<workspace_usage used=", "`open` tool",
		"last 40 messages", "newest 6", "#1D75B3", "txt, md, json",
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := p.Render(tt.extra)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range append(tt.want, notation...) {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q", w)
				}
			}
			for _, w := range tt.dontWant {
				if strings.Contains(got, w) {
					t.Errorf("unexpected %q", w)
				}
			}
			if n := estimateTokens(got); n > 1500 {
				t.Errorf("root prompt is about %d tokens, want at most 1500", n)
			}
		})
	}
}

// estimateTokens over-estimates a tokenizer's count: a token per 4 bytes of
// ASCII and one per other rune.
func estimateTokens(s string) int {
	ascii, other := 0, 0
	for _, r := range s {
		if r < utf8.RuneSelf {
			ascii++
		} else {
			other++
		}
	}
	return ascii/4 + other
}

func TestDefaultGolden(t *testing.T) {
	p, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Render(nil)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "default.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("rendered default persona differs from %s (run go test -update if the change is meant):\n%s", golden, got)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, FileName), `---
name: Mika
description: test persona
color: teal
reference: style/corpus.txt
variables:
  developer_name: Rin
  context_count: 12
  work_mode: yes
  supported_formats: md
  hobby: [tea, go]
  nothing:
---
I am ${agent_name}, made by ${developer_name}; ${context_count}/${mini_full_context_count}.
${work_mode ? busy : idle} ${hobby} [${nothing}] ${supported_formats}
${file_load(notes/extra.md)}
${channel = no channel}
`)
	write(t, filepath.Join(dir, "style", "corpus.txt"), "hi~\nbye~\n")
	write(t, filepath.Join(dir, "notes", "extra.md"), "extra notes")

	p, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "Mika" || p.Description != "test persona" || p.Color != "teal" || p.Dir != dir {
		t.Errorf("got %+v", p)
	}
	if p.ContextCount != 12 || p.MiniFullContextCount != 6 || !p.WorkMode {
		t.Errorf("ContextCount %d, MiniFullContextCount %d, WorkMode %v", p.ContextCount, p.MiniFullContextCount, p.WorkMode)
	}
	if p.Reference != "hi~\nbye~" {
		t.Errorf("Reference %q", p.Reference)
	}
	if p.Vars["agent_name"] != "Mika" || p.Vars["mini_full_context_count"] != 6 {
		t.Errorf("Vars %v", p.Vars)
	}

	got, err := p.Own(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "I am Mika, made by Rin; 12/6.\nbusy tea, go [] md\nextra notes\nno channel\n"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}

	got, err = p.Own(map[string]any{"channel": "desktop", "work_mode": false, "agent_name": "M"})
	if err != nil {
		t.Fatal(err)
	}
	want = "I am M, made by Rin; 12/6.\nidle tea, go [] md\nextra notes\ndesktop\n"
	if got != want {
		t.Errorf("with extra: got  %q\nwant %q", got, want)
	}
	if p.Vars["agent_name"] != "Mika" || p.Vars["work_mode"] != true {
		t.Errorf("Render changed Vars: %v", p.Vars)
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name  string
		file  string
		files map[string]string
		want  string // after "<dir>/persona.md:"; a final "…" matches any rest
	}{
		{name: "no front-matter", file: "hello", want: "1:1: a persona starts with front-matter: …"},
		{name: "not closed", file: "---\nname: a\n", want: "1:1: front-matter is not closed: …"},
		{name: "unknown key", file: "---\nname: a\nnmae: b\n---\n", want: `3:1: unknown key "nmae": the keys are name, description, color, reference, lorebook, language, platform, depth_prompt and variables`},
		{name: "missing name", file: "---\ndescription: x\n---\n", want: "2:1: name: missing: …"},
		{name: "empty name", file: "---\nname: \"  \"\n---\n", want: "2:1: name: missing: …"},
		{name: "empty front-matter", file: "---\n---\n", want: "1:1: name: missing: …"},
		{name: "name not text", file: "---\nname: [a]\n---\n", want: "2:7: name: want text"},
		{name: "given twice", file: "---\nname: a\nname: b\n---\n", want: "3:1: name: given twice"},
		{name: "not a map", file: "---\n- a\n---\n", want: "2:1: front-matter must be keys and values, …"},
		{name: "yaml syntax", file: "---\nname: a\nvariables: [\n---\n", want: "3: front-matter: …"},
		{name: "context_count not a number", file: "---\nname: a\nvariables:\n  context_count: many\n---\n", want: `4:18: variables.context_count: want a whole number of 1 or more, got "many"`},
		{name: "context_count zero", file: "---\nname: a\nvariables:\n  context_count: 0\n---\n", want: `4:18: variables.context_count: want a whole number of 1 or more, got "0"`},
		{name: "negative mini_full", file: "---\nname: a\nvariables:\n  mini_full_context_count: -1\n---\n", want: `4:28: variables.mini_full_context_count: want a whole number of 0 or more, got "-1"`},
		{name: "mini_full over context_count", file: "---\nname: a\nvariables:\n  context_count: 3\n  mini_full_context_count: 4\n---\n", want: "5:28: variables.mini_full_context_count (4) must not exceed context_count (3)"},
		{name: "default mini_full over context_count", file: "---\nname: a\nvariables:\n  context_count: 3\n---\n", want: "4:18: variables.mini_full_context_count (6) must not exceed context_count (3)"},
		{name: "work_mode", file: "---\nname: a\nvariables:\n  work_mode: maybe\n---\n", want: `4:14: variables.work_mode: want true or false, got "maybe"`},
		{name: "agent_name", file: "---\nname: a\nvariables:\n  agent_name: b\n---\n", want: "4:3: variables.agent_name: agent_name is always the persona's name; set name instead"},
		{name: "bad variable name", file: "---\nname: a\nvariables:\n  9x: b\n---\n", want: "4:3: variables.9x: a variable name holds …"},
		{name: "map variable", file: "---\nname: a\nvariables:\n  m: {a: 1}\n---\n", want: "4:6: variables.m: want a plain value or a list of them"},
		{name: "variables not a map", file: "---\nname: a\nvariables: 3\n---\n", want: "3:12: variables: want a map of names to values"},
		{name: "unquoted colour", file: "---\nname: a\ncolor: #1D75B3\n---\n", want: "3:7: color: quote the colour, …"},
		{name: "bad colour", file: "---\nname: a\ncolor: \"#12\"\n---\n", want: `3:8: color: "#12" is not a colour: …`},
		{name: "reference outside", file: "---\nname: a\nreference: ../x.txt\n---\n", want: `3:12: reference: path "../x.txt" leaves the persona folder`},
		{name: "reference missing", file: "---\nname: a\nreference: x.txt\n---\n", want: "3:12: reference: …"},
		{name: "body syntax error", file: "---\nname: a\n---\nline\n  ${", want: "5:3: unterminated ${: missing }"},
		{name: "body file_load missing", file: "---\nname: a\n---\n\n${file_load(x.md)}", want: "5:1: file_load(x.md): …"},
		{name: "body file_load outside", file: "---\nname: a\n---\n${file_load(../x.md)}", want: `4:1: file_load refused: path "../x.md" leaves the persona folder`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, filepath.Join(dir, FileName), tt.file)
			_, err := Load(dir)
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T is not an *Error: %v", err, err)
			}
			if want := filepath.Join(dir, FileName) + ":" + tt.want; !matches(err.Error(), want) {
				t.Errorf("error\n got  %q\n want %q", err, want)
			}
		})
	}
}

func TestLoadMissing(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "needs a "+FileName) {
		t.Errorf("empty folder: got %v", err)
	}
	if _, err := Load(filepath.Join(dir, "nope")); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing folder: got %v", err)
	}
}

func TestLoadSymlinkOutside(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "persona")
	write(t, filepath.Join(base, "secret.txt"), "secret")
	write(t, filepath.Join(dir, FileName), "---\nname: a\nreference: ref.txt\n---\n")
	symlink(t, filepath.Join(base, "secret.txt"), filepath.Join(dir, "ref.txt"))
	_, err := Load(dir)
	if want := filepath.Join(dir, FileName) + ":3:12: reference: …"; err == nil || !matches(err.Error(), want) {
		t.Errorf("got %v, want %q", err, want)
	}

	write(t, filepath.Join(dir, FileName), "---\nname: a\n---\n${file_load(ref.txt)}")
	_, err = Load(dir)
	if want := filepath.Join(dir, FileName) + ":4:1: file_load(ref.txt): …"; err == nil || !matches(err.Error(), want) {
		t.Errorf("got %v, want %q", err, want)
	}
}
