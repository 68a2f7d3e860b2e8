package config

import (
	"strings"
	"testing"
	"time"
)

func TestBridgesSection(t *testing.T) {
	c, err := Load(envOf(map[string]string{EnvDataDir: t.TempDir(), EnvConfig: "testdata/bridges.good.yml"}))
	if err != nil {
		t.Fatal(err)
	}
	b := c.Bridges
	if len(b.OneBot) != 2 || len(b.Telegram) != 1 || b.OneBot[1].MessageFormat != "string" || b.Telegram[0].APIURL != "http://127.0.0.1:8081" {
		t.Fatalf("bridges = %+v", b)
	}
	if b.Manners.ChimeIn != 0.05 || b.Manners.GroupTurns != DefaultManners().GroupTurns {
		t.Errorf("the shared manners keep the defaults they do not set: %+v", b.Manners)
	}
	own := b.Manners.Over(b.OneBot[1].Manners)
	if time.Duration(own.Debounce) != time.Second || own.WakeWords[0] != "小蓝" || own.QuietHours != "23:00-07:00" || own.ChimeIn != 0.05 {
		t.Errorf("an instance's manners win where set: %+v", own)
	}
	if y, _ := c.YAML(); strings.Contains(string(y), "tok-one") || strings.Contains(string(y), "ABC-DEF") {
		t.Errorf("secrets printed:\n%s", y)
	}
	_, err = Load(envOf(map[string]string{EnvDataDir: t.TempDir(), EnvConfig: "testdata/bridges.bad.yml"}))
	if err == nil {
		t.Fatal("bad bridges accepted")
	}
	for _, want := range []string{"bridges.onebot[0].name", "bridges.onebot[0].mode", "bridges.onebot[1].url", "bridges.onebot[2].name",
		"bridges.onebot[3].access_token", "bridges.telegram[0].token", "bridges.telegram[0].webhook.url", "bridges.telegram[0].webhook.secret",
		"bridges.manners.chime_in", "bridges.manners.quiet_hours"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not name %s:\n%v", want, err)
		}
	}
}
