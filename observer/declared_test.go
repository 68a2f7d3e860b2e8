package observer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseDeclared(t *testing.T) {
	good := "name: water\ntriggers:\n  - cron: \"0 */2 * * *\"\n  - on: Keyword\n    keywords: [thirsty]\n  - every: 3h\nprompt: remind to drink\nbudget: 100\nquiet_hours: 23:00-08:00\nchannels: [home]\ncatch_up: false\n"
	d, err := ParseDeclared("water.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "water" || len(d.Triggers) != 3 || d.CatchUp || d.Quiet == nil || d.Budget != 100 {
		t.Fatalf("parsed %+v", d)
	}
	// A prompt script may take the prompt's place.
	d, err = ParseDeclared("s.yaml", []byte("name: s\nscript: water_check\nchannels: [a]\ntriggers: [{cron: '@daily'}]\n"))
	if err != nil || d.Script != "water_check" || d.Prompt != "" {
		t.Fatalf("script observer %+v %v", d, err)
	}
	tests := []struct{ name, src, want string }{
		{"unknown key", "name: x\nprompt: p\nchannels: [a]\ntriggers: [{cron: '@daily'}]\nmood: happy\n", "x.yaml: line 5: field mood not found"},
		{"bad cron", "name: x\nprompt: p\nchannels: [a]\ntriggers: [{cron: 'daily'}]\n", "trigger 1: cron"},
		{"no channels", "name: x\nprompt: p\ntriggers: [{cron: '@daily'}]\n", "channels is missing"},
		{"too often", "name: x\nprompt: p\nchannels: [a]\ntriggers: [{every: 5s}]\n", "too often"},
		{"built-in name", "name: main-observer\nprompt: p\nchannels: [a]\ntriggers: [{cron: '@daily'}]\n", "built-in name"},
		{"bad quiet", "name: x\nprompt: p\nchannels: [a]\nquiet_hours: night\ntriggers: [{cron: '@daily'}]\n", "HH:MM-HH:MM"},
		{"not yaml", "name: [x\n", "x.yaml"},
		{"neither prompt nor script", "name: x\nchannels: [a]\ntriggers: [{cron: '@daily'}]\n", "prompt is missing"},
		{"script path", "name: x\nscript: ../evil.ai.yaml\nchannels: [a]\ntriggers: [{cron: '@daily'}]\n", "without its .ai.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ParseDeclared("x.yaml", []byte(tt.src)); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestLoadDeclaredSkipsBadFiles(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "observers"), 0o755)
	os.WriteFile(filepath.Join(dir, "observers", "a.yaml"), []byte("name: a\nprompt: p\nchannels: [c]\ntriggers: [{cron: '@daily'}]\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "observers", "b.yaml"), []byte("name: b\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "observers", "c.yaml"), []byte("name: a\nprompt: p\nchannels: [c]\ntriggers: [{cron: '@daily'}]\n"), 0o644)
	got, errs := LoadDeclared(dir)
	if len(got) != 1 || got[0].Name != "a" || len(errs) != 2 {
		t.Fatalf("loaded %+v, errors %v", got, errs)
	}
	if none, errs := LoadDeclared(t.TempDir()); none != nil || errs != nil {
		t.Fatal("a persona without observers/ is fine")
	}
}

func FuzzParseDeclared(f *testing.F) {
	f.Add([]byte("name: water\ntriggers:\n  - every: 3h\nprompt: p\nchannels: [home]\n"))
	f.Add([]byte("name: x\ntriggers: [{cron: '0 9 * * 1-5'}, {on: Keyword, keywords: [a]}]\nprompt: p\nchannels: [a]\nquiet_hours: 23:00-07:00\n"))
	f.Add([]byte("name: y\ntriggers: [{every: 1h}]\nscript: my_check\nprompt: p\nchannels: [a]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseDeclared("f.yaml", data)
		if err == nil && (d.Name == "" || len(d.Triggers) == 0 || len(d.Channels) == 0 || (d.Prompt == "" && d.Script == "")) {
			t.Fatalf("accepted an incomplete declaration: %+v", d)
		}
	})
}
