package persona

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func loadSrc(t *testing.T, src string) *Persona {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// platformRules are the notation rules and the tools section every root
// prompt carries, whatever the persona writes (English).
var platformRules = []string{
	"# Notation & Syntax", "`^alice [2026-11-22 10:31]: text`", "`^system [time]: text`", "`#name`", "backslash",
	"`%[path]`", "`%[path] Line n ~ Line m`", "`@br`", "`<empty_reply>`", "`@last_Kiki`", "`@last_n_Kiki`", "[compressed]",
	"# Tools", "`workspace_usage`", "<workspace_usage used=", "`open` tool", "keep %[path]",
	"# System Info", "`^system` line",
}

// A persona of two lines still gets the whole platform part: the notation
// the model reads and writes is cyan's contract, not the persona's.
func TestTwoLinePersonaGetsThePlatform(t *testing.T) {
	p := loadSrc(t, "---\nname: Kiki\n---\nI am Kiki, a witch who delivers bread.\nI speak briefly.\n")
	got, err := p.Render(map[string]any{"now": "2026-11-23 10:00 Monday UTC +00:00", "channel": "home", "channel_kind": "private", "speaker": "tombo"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range append(platformRules, "I am Kiki, a witch", "It is now 2026-11-23 10:00", "from tombo.") {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if i, j := strings.Index(got, "# Notation"), strings.Index(got, "I am Kiki"); !(i < j && j < strings.Index(got, "# Tools")) {
		t.Errorf("order: notation, the persona, tools:\n%s", got)
	}
}

// A persona reworded in its own language: the rules in Chinese, the slots
// reworded and added, never removed.
func TestPlatformLanguageAndSlots(t *testing.T) {
	p := loadSrc(t, `---
name: 小蓝
language: zh
platform:
  notation_intro: 下面是对话的写法。
  tools_extra: 用工具之前先想一想。
---
我是小蓝。
`)
	got, err := p.Render(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# 符号与语法", "下面是对话的写法。", "`@br`", "`<empty_reply>`", "`@last_小蓝`", "# 工具", "用工具之前先想一想。", "`workspace_usage`", "# 系统信息", "我是小蓝。"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "以下规则说明") || strings.Contains(got, "# Notation") {
		t.Errorf("the intro was not reworded, or English leaked in:\n%s", got)
	}
	for _, bad := range []string{
		"---\nname: x\nplatform:\n  notation_rules: none\n---\nhi\n",
		"---\nname: x\nlanguage: fr\n---\nhi\n",
		"---\nname: x\nplatform: [a]\n---\nhi\n",
	} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, FileName), []byte(bad), 0o600)
		if _, err := Load(dir); err == nil {
			t.Errorf("accepted:\n%s", bad)
		}
	}
}

// A persona folder written before the split carries its own copies of the
// platform's sections: they are replaced, not said twice, and its own
// sections stay.
func TestOldPersonaFolderKeepsWorking(t *testing.T) {
	p := loadSrc(t, "---\nname: Old\n---\n# Notation & Syntax\nold rules: ^name lines.\n\n# Self-Definition\nI am Old.\n\n# Tools\nold tool rules.\n\n# Hobbies\nI knit.\n\n# System Info\nold system info.\n")
	got, err := p.Render(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"old rules", "old tool rules", "old system info"} {
		if strings.Contains(got, bad) {
			t.Errorf("kept %q:\n%s", bad, got)
		}
	}
	if strings.Count(got, "# Notation & Syntax") != 1 || strings.Count(got, "# Tools") != 1 || !strings.Contains(got, "# Hobbies\nI knit.") || !strings.Contains(got, "I am Old.") {
		t.Errorf("rendered:\n%s", got)
	}
}
