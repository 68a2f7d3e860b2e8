package persona

import (
	"os"
	"path/filepath"
	"testing"
)

func TestGreeting(t *testing.T) {
	tests := []struct {
		name, vars, channel string
		group               bool
		want                string
	}{
		{"none", "", "c", false, ""},
		{"first", "first_mes: \"Hi ${user}, I am ${agent_name}.\"\n  alternate_greetings: [Yo.]", "c", false, "Hi alice, I am Sera."},
		{"only alternates", "alternate_greetings: [\"Yo ${user}.\", Hey.]", "c", false, "Yo alice."},
		{"group without group greetings", "first_mes: Hi.", "g", true, ""},
		{"group", "first_mes: Hi.\n  group_only_greetings: [\"Hello all, from ${channel}.\"]", "g", true, "Hello all, from g."},
		{"any, by channel", "greeting_pick: any\n  first_mes: A\n  alternate_greetings: [B, C]", "room-1", false, "C"},
		{"any, another channel", "greeting_pick: any\n  first_mes: A\n  alternate_greetings: [B, C]", "room-3", false, "A"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			src := "---\nname: Sera\nvariables:\n  " + tt.vars + "\n---\nx\n"
			if err := os.WriteFile(filepath.Join(dir, FileName), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			p, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Greeting(tt.channel, tt.group, "alice")
			if err != nil || got != tt.want {
				t.Fatalf("Greeting = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestGreetingTemplateError(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, FileName), []byte("---\nname: S\nvariables:\n  first_mes: \"${nope}\"\n---\n"), 0o644)
	p, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Greeting("c", false, "u"); err == nil {
		t.Fatal("want an error for an unknown variable")
	}
}

func TestLorebookKey(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, FileName), []byte("---\nname: S\nlorebook: book.json\n---\n"), 0o644)
	if _, err := Load(dir); err == nil {
		t.Fatal("a missing lorebook file must be an error")
	}
	os.WriteFile(filepath.Join(dir, "book.json"), []byte(`{"entries": []}`), 0o644)
	p, err := Load(dir)
	if err != nil || p.LorebookFile != "book.json" || string(p.Lorebook) != `{"entries": []}` {
		t.Fatalf("%v %+v", err, p)
	}
	os.WriteFile(filepath.Join(dir, FileName), []byte("---\nname: S\nlorebook: ../book.json\n---\n"), 0o644)
	if _, err := Load(dir); err == nil {
		t.Fatal("a lorebook outside the folder must be refused")
	}
}
