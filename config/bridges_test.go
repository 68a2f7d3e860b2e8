package config_test

// This external test links the platforms and voices this build has, so
// every test of the package (inside or out) checks configurations against
// the real registry, as `cyan config check` does.
import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/bridge/onebot"
	"github.com/cyan-agent/cyan/bridge/telegram"
	"github.com/cyan-agent/cyan/config"
	_ "github.com/cyan-agent/cyan/tts"
)

func envOf(m map[string]string) config.Env { return func(k string) string { return m[k] } }

func TestBridgesSection(t *testing.T) {
	c, err := config.Load(envOf(map[string]string{config.EnvDataDir: t.TempDir(), config.EnvConfig: "testdata/bridges.good.yml"}))
	if err != nil {
		t.Fatal(err)
	}
	b := c.Bridges
	ob, _ := b.Section("onebot").(*onebot.Section)
	tg, _ := b.Section("telegram").(*telegram.Section)
	if ob == nil || tg == nil || len(*ob) != 2 || len(*tg) != 1 || (*ob)[1].MessageFormat != "string" || (*tg)[0].APIURL != "http://127.0.0.1:8081" {
		t.Fatalf("bridges = %+v", b)
	}
	if got := strings.Join(b.Names(), " "); got != "qq qq2 tg" {
		t.Errorf("names = %s", got)
	}
	if b.Manners.ChimeIn != 0.05 || b.Manners.GroupTurns != config.DefaultManners().GroupTurns {
		t.Errorf("the shared manners keep the defaults they do not set: %+v", b.Manners)
	}
	own := b.Manners.Over((*ob)[1].Manners)
	if time.Duration(own.Debounce) != time.Second || own.WakeWords[0] != "小蓝" || own.QuietHours != "23:00-07:00" || own.ChimeIn != 0.05 {
		t.Errorf("an instance's manners win where set: %+v", own)
	}
	y, err := c.YAML()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(y), "tok-one") || strings.Contains(string(y), "ABC-DEF") {
		t.Errorf("secrets printed:\n%s", y)
	}
	for _, want := range []string{"onebot:\n", "name: qq2", "mode: forward", "telegram:\n", "api_url: http://127.0.0.1:8081", "chime_in: 0.05", "resume_max_age: 30m0s"} {
		if !strings.Contains(string(y), want) {
			t.Errorf("the printed configuration lacks %q:\n%s", want, y)
		}
	}
	if (*ob)[0].AccessToken != "tok-one" {
		t.Errorf("printing masked the loaded configuration's token: %q", (*ob)[0].AccessToken)
	}
	_, err = config.Load(envOf(map[string]string{config.EnvDataDir: t.TempDir(), config.EnvConfig: "testdata/bridges.bad.yml"}))
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

// A key under bridges: that no platform registered is an unknown key, and
// the error lists the platforms besides the shared keys; a bridge name is
// unique across platforms.
func TestBridgesKeysComeFromTheRegistry(t *testing.T) {
	for _, tt := range []struct{ name, yaml, want string }{
		{"unknown platform", "bridges:\n  matrix:\n    - {name: m}\n",
			"bridges.matrix: unknown key; known keys here: manners, onebot, resume_max_age, silent_after, telegram"},
		{"a name across platforms", "bridges:\n  onebot:\n    - {name: chat, mode: reverse, access_token: t}\n  telegram:\n    - {name: chat, token: \"1:x\"}\n",
			`bridges.telegram[0].name: "chat" is already the name of bridges.onebot[0]`},
		{"an instance's manners", "bridges:\n  telegram:\n    - {name: tg, token: \"1:x\", manners: {chime_in: 2}}\n",
			"bridges.telegram[0].manners.chime_in: 2 is not a chance from 0 to 1"},
		{"a section set twice", "bridges:\n  onebot: []\n  onebot: []\n", "bridges.onebot: set twice"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "cyan.yaml")
			if err := os.WriteFile(path, []byte(tt.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := config.Load(envOf(map[string]string{config.EnvConfig: path, config.EnvDataDir: filepath.Join(dir, "data")}))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}
