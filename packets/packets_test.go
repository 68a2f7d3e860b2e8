package packets

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestDecodeNatural(t *testing.T) {
	tests := []struct {
		name, in string
		want     string // error substring, "" for success
		limit    int
	}{
		{"full", `{"aim":"extract %[a.mp4]","scene":"subtitles","appendix":["/w/a.mp4"],"output_text_limit":255,"output_file_limit":["字幕.txt"]}`, "", 255},
		{"defaults", `{"aim":"x"}`, "", MaxText},
		{"unlimited", `{"aim":"x","output_text_limit":-1}`, "", MaxText},
		{"over max", `{"aim":"x","output_text_limit":1000000}`, "", MaxText},
		{"aim array", `{"aim":["a","b"]}`, "is a list; write one string", 0},
		{"scene array", `{"aim":"a","scene":["a"]}`, "scene: is a list", 0},
		{"aim number", `{"aim":3}`, "must be a string", 0},
		{"empty aim", `{"aim":"  "}`, "aim is empty", 0},
		{"unknown", `{"aim":"a","goal":"b"}`, "goal: unknown field", 0},
		{"bad limit", `{"aim":"a","output_text_limit":-2}`, "is not a limit", 0},
		{"trailing", `{"aim":"a"} {}`, "trailing data", 0},
		{"not object", `["a"]`, "JSON object", 0},
		{"null", `null`, "not null", 0},
		{"appendix strings", `{"aim":"a","appendix":[1]}`, "list of strings", 0},
		{"too many files", `{"aim":"a","output_file_limit":[` + strings.Repeat(`"f",`, MaxFiles) + `"f"]}`, "at most 512", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := DecodeNatural([]byte(tt.in))
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, ErrPacket) {
					t.Fatalf("err = %v, want %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n.TextLimit() != tt.limit {
				t.Fatalf("limit %d, want %d", n.TextLimit(), tt.limit)
			}
		})
	}
}

func TestClip(t *testing.T) {
	n := Natural{Aim: "a", OutputTextLimit: 5, OutputFileLimit: []string{"a.txt", "b.txt", "c.txt"}}
	r := n.Clip(Result{OutputText: "青蓝青蓝青蓝青蓝", OutputFile: []string{"/x/a.txt", ""}})
	if r.OutputText != "青蓝青蓝…" || utf8.RuneCountInString(r.OutputText) != 5 {
		t.Fatalf("text %q", r.OutputText)
	}
	if len(r.OutputFile) != 3 || r.OutputFile[0] != "/x/a.txt" || r.OutputFile[1] != "" || r.OutputFile[2] != "" {
		t.Fatalf("files %q", r.OutputFile)
	}
	r = n.Clip(Result{OutputFile: []string{"1", "2", "3", "4"}})
	if len(r.OutputFile) != 3 || r.OutputFile[2] != "3" {
		t.Fatalf("extra files kept: %q", r.OutputFile)
	}
	u := Natural{Aim: "a", OutputTextLimit: -1}
	many := make([]string, 600)
	r = u.Clip(Result{OutputText: strings.Repeat("x", MaxText+10), OutputFile: many})
	if utf8.RuneCountInString(r.OutputText) != MaxText || len(r.OutputFile) != MaxFiles {
		t.Fatalf("hard limits: %d chars, %d files", utf8.RuneCountInString(r.OutputText), len(r.OutputFile))
	}
	if got := (Natural{OutputTextLimit: 0}).Clip(Result{OutputText: "abc"}); got.OutputText != "" || got.OutputFile == nil {
		t.Fatalf("zero limit: %+v", got)
	}
	if CutText("a\xffb", 10) != "a\uFFFDb" {
		t.Fatal("invalid UTF-8 kept")
	}
}

func TestDecodeAction(t *testing.T) {
	a, err := DecodeAction([]byte(`{"path":"/x","n":3}`))
	if err != nil || a["path"] != "/x" {
		t.Fatal(a, err)
	}
	if a, err := DecodeAction(nil); err != nil || a == nil {
		t.Fatal(a, err)
	}
	if _, err := DecodeAction([]byte(`"do it"`)); err == nil {
		t.Fatal("a string is not an action packet")
	}
}

func TestRuleForms(t *testing.T) {
	var p Permission
	err := json.Unmarshal([]byte(`{
		"tools": ["!delete_*", "w*", {"read_file": {"action": "allow", "parameters": {"file_path": ["!/dangerous/*", "/safe/*"]}}},
		          {"name": "terminal", "action": "CONFIRM"}, {"speak": null}],
		"infos": ["events/*"], "self_edit": ["tools/extra/custom/*"], "defaultAction": "deny"}`), &p)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Tools) != 5 || !p.Tools[0].Negate || !p.Tools[2].Object || p.Tools[3].Action != Confirm || p.Tools[4].Action != Allow {
		t.Fatalf("%+v", p.Tools)
	}
	b, _ := json.Marshal(p)
	var back Permission
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("round trip %s: %v", b, err)
	}
	b2, _ := json.Marshal(back)
	if string(b) != string(b2) {
		t.Fatalf("round trip changed:\n%s\n%s", b, b2)
	}
	bad := []struct{ in, want string }{
		{`{"tools": [""]}`, "empty"},
		{`{"tools": ["!"]}`, "empty"},
		{`{"tools": [3]}`, "a rule is a string glob"},
		{`{"tools": [{"!x": {}}]}`, "cannot negate"},
		{`{"tools": [{"a": {}, "b": {}}]}`, "one field"},
		{`{"tools": [{"a": {"action": "maybe"}}]}`, "not allow, deny or confirm"},
		{`{"tools": [{"a": {"when": 1}}]}`, "unknown field"},
		{`{"tools": [{"a": {"parameters": {"p": 3}}}]}`, "list of globs"},
		{`{"tool": []}`, "unknown field"},
		{`{"defaultAction": "ask"}`, "not allow"},
		{`{"infos": "x"}`, "list of globs"},
	}
	for _, b := range bad {
		var p Permission
		if err := json.Unmarshal([]byte(b.in), &p); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: err = %v, want %q", b.in, err, b.want)
		}
	}
}

func TestInfosSelfEditDistribute(t *testing.T) {
	child := Permission{Tools: []Rule{{Pattern: "speak"}}}
	p := Permission{Infos: []string{"events/**", "!events/private/*"}, SelfEdit: []string{"tools/extra/custom/*"}, Distribute: []Permission{child}}
	if !p.SeesInfo("events/2026/a") || p.SeesInfo("events/private/x") || p.SeesInfo("workspace/a") {
		t.Fatal("infos")
	}
	if !p.MaySelfEdit("tools/extra/custom/w.yaml") || p.MaySelfEdit("tools/extra/custom/../provided/w.yaml") || p.MaySelfEdit("persona/persona.md") {
		t.Fatal("self_edit")
	}
	if !p.MayDistribute(child) || p.MayDistribute(Permission{Tools: []Rule{{Pattern: "*"}}}) {
		t.Fatal("distribute")
	}
	var nilp *Permission
	if nilp.Check(Subject{Tool: "x"}).Decision != Deny || nilp.SeesInfo("x") {
		t.Fatal("nil permission allows")
	}
}
