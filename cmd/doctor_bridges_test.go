package cmd

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/internal/onebottest"
	"github.com/cyan-agent/cyan/internal/tgtest"
)

// TestDoctorChecksTheConfiguredBridges: with bridges configured and no
// owners, cyan doctor's owner line names them, and each bridge has its
// own line — a Telegram token the Bot API refuses fails with the fix, a
// reverse OneBot bridge without a daemon says to start it.
func TestDoctorChecksTheConfiguredBridges(t *testing.T) {
	tg := &tgtest.Server{Token: "123:right", Bot: tgtest.User{ID: 77, IsBot: true, FirstName: "cyan", Username: "cyan_bot"}}
	srv := httptest.NewServer(tg)
	defer srv.Close()
	yaml := "addr: 127.0.0.1:1\nllm: {base_url: http://127.0.0.1:1/v1}\ntts: {provider: off}\n" +
		"bridges:\n  onebot:\n    - {name: qq, mode: reverse, access_token: tok}\n" +
		"  telegram:\n    - {name: tg, token: \"123:wrong\", api_url: " + srv.URL + "}\n"
	code, out, errb := runCmd(sayEnv(t, yaml), "doctor", "--json", "--timeout", "2s")
	if code != exitFailed {
		t.Errorf("exit %d, want %d (the wrong token fails)\n%s", code, exitFailed, errb)
	}
	var rep struct {
		Checks []struct{ Name, State, Message, Fix string }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	lines := map[string]string{}
	for _, c := range rep.Checks {
		lines[c.Name] = c.State + " " + c.Message + " | " + c.Fix
	}
	for name, want := range map[string]string{
		"owner":     "warn no permissions.owners: every private message without a platform id (terminal, page, API) is the owner's; but bridges are configured (qq, tg)",
		"bridge qq": "warn OneBot reverse: the daemon is not running",
		"bridge tg": "fail Telegram: the Bot API refused the token",
	} {
		if !strings.HasPrefix(lines[name], want) {
			t.Errorf("%s: %q, want it to begin %q", name, lines[name], want)
		}
	}
	if !strings.Contains(lines["bridge tg"], "| copy the token @BotFather gave") {
		t.Errorf("bridge tg does not say how to fix the token: %q", lines["bridge tg"])
	}
}

// TestDoctorNamesAWrongForwardToken: without a daemon, doctor dials a
// forward implementation itself; NapCat's server takes the upgrade and
// answers the 1403 frame, which doctor reads as the wrong access_token and
// names the setting to match.
func TestDoctorNamesAWrongForwardToken(t *testing.T) {
	impl := &onebottest.Impl{SelfID: 10001, Token: "right"}
	srv := httptest.NewServer(impl)
	defer srv.Close()
	yaml := "addr: 127.0.0.1:1\nllm: {base_url: http://127.0.0.1:1/v1}\ntts: {provider: off}\n" +
		"bridges:\n  onebot:\n    - {name: qq, mode: forward, url: ws" + strings.TrimPrefix(srv.URL, "http") + ", access_token: wrong}\n"
	_, out, _ := runCmd(sayEnv(t, yaml), "doctor", "--json", "--timeout", "2s")
	var rep struct {
		Checks []struct{ Name, State, Message, Fix string }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, c := range rep.Checks {
		if c.Name == "bridge qq" {
			if c.State != "fail" || !strings.Contains(c.Message, "wrong access_token") || !strings.Contains(c.Fix, "bridges.onebot[].access_token") {
				t.Errorf("bridge qq: %+v", c)
			}
			return
		}
	}
	t.Fatalf("no bridge qq check:\n%s", out)
}
