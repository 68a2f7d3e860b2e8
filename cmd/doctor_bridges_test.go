package cmd

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

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
		"owner":     "warn the owner is local (the terminal, the page, your API calls: private messages without a chat-app id); but bridges are configured (qq, tg)",
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
