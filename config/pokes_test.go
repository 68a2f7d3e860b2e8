package config_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cyan-agent/cyan/bridge/onebot"
	"github.com/cyan-agent/cyan/config"
)

// ignore_pokes is read under bridges.manners and an instance's own
// manners, the instance's list winning.
func TestIgnorePokesPerGroup(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "c.yml")
	yaml := "bridges:\n  manners: {ignore_pokes: [\"*\"]}\n  onebot:\n    - {name: qq, mode: reverse, access_token: t, manners: {ignore_pokes: [\"555\", \"556\"]}}\n    - {name: qq2, mode: reverse, access_token: u}\n"
	if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(envOf(map[string]string{config.EnvDataDir: dir, config.EnvConfig: p}))
	if err != nil {
		t.Fatal(err)
	}
	b := c.Bridges
	ob := *b.Section("onebot").(*onebot.Section)
	if got := b.Manners.Over(ob[0].Manners).IgnorePokes; !slices.Equal(got, []string{"555", "556"}) {
		t.Errorf("qq ignores pokes in %v", got)
	}
	if got := b.Manners.Over(ob[1].Manners).IgnorePokes; !slices.Equal(got, []string{"*"}) {
		t.Errorf("qq2 ignores pokes in %v", got)
	}
	if len(config.DefaultManners().IgnorePokes) != 0 {
		t.Error("by default a poke addresses the bot everywhere")
	}
}
