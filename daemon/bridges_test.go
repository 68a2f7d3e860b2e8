package daemon

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/tgtest"
	"github.com/cyan-agent/cyan/router"
	"github.com/cyan-agent/cyan/supervise"
)

// components reads the router's components from /healthz.
func (r *rig) components() map[string]router.Status {
	r.t.Helper()
	resp, err := http.Get(r.base + "/healthz")
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	var h struct{ Components []router.Status }
	json.NewDecoder(resp.Body).Decode(&h)
	out := map[string]router.Status{}
	for _, c := range h.Components {
		out[c.Name] = c
	}
	return out
}

// TestBridgesAreSupervisedRouterComponents: each configured bridge is a
// supervised part and a router component subscribed to its channels; a
// Telegram token the Bot API refuses stops that part (not restarted, its
// error shown) while the others run; a bridge taken out of the config
// loses its subscription at the next start.
func TestBridgesAreSupervisedRouterComponents(t *testing.T) {
	tg := &tgtest.Server{Token: "123:right", Bot: tgtest.User{ID: 77, IsBot: true, FirstName: "cyan", Username: "cyan_bot"}}
	srv := httptest.NewServer(tg)
	defer srv.Close()
	yaml := "bridges:\n  onebot:\n    - {name: qq, mode: reverse, access_token: tok}\n" +
		"  telegram:\n    - {name: tg, token: \"123:wrong\", api_url: " + srv.URL + "}\n"
	r := newRig(t, map[string]string{"cyan.yaml": yaml})
	deadline := time.Now().Add(10 * time.Second)
	for {
		h := r.health()
		qq, tgp := h["bridge:qq"], h["bridge:tg"]
		// A part is running from the moment its Run is called; the bridge
		// attaches to the router a moment later, in Run: wait for both.
		if qq.State == supervise.Running && tgp.State == supervise.Stopped && r.components()["bridge:qq"].Attached {
			if !strings.Contains(tgp.LastError, "fix the token and restart") || tgp.Restarts != 0 {
				t.Fatalf("bridge:tg = %+v", tgp)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("bridge:qq %+v, bridge:tg %+v", qq, tgp)
		}
		time.Sleep(10 * time.Millisecond) // polling the supervisor
	}
	c := r.components()
	if qq := c["bridge:qq"]; strings.Join(qq.Channels, ",") != "qq:*" || !qq.Attached {
		t.Errorf("component bridge:qq = %+v", qq)
	}
	if tgc, ok := c["bridge:tg"]; !ok || strings.Join(tgc.Channels, ",") != "tg:*" || tgc.Attached {
		t.Errorf("component bridge:tg = %+v (subscribed, not attached while stopped)", tgc)
	}

	r.stop()
	if err := os.WriteFile(r.env["CYAN_CONFIG"], []byte("bridges:\n  onebot:\n    - {name: qq, mode: reverse, access_token: tok}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.start()
	c = r.components()
	if _, ok := c["bridge:tg"]; ok {
		t.Errorf("bridge:tg is still subscribed after leaving the config: %+v", c)
	}
	if _, ok := c["bridge:qq"]; !ok {
		t.Errorf("bridge:qq lost its subscription: %+v", c)
	}
}

// TestABridgeWhosePlatformIsDownIsRestartedBySupervise: a Telegram bot
// whose Bot API answers 502 ends its run with the error; the supervisor,
// not the adapter, tries again with backoff, and /healthz shows the part
// restarting with the error and its restarts counted.
func TestABridgeWhosePlatformIsDownIsRestartedBySupervise(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"ok":false,"error_code":502,"description":"Bad Gateway"}`, http.StatusBadGateway)
	}))
	defer srv.Close()
	r := newRig(t, map[string]string{"cyan.yaml": "bridges:\n  telegram:\n    - {name: tg, token: \"123:abc\", api_url: " + srv.URL + "}\n"})
	deadline := time.Now().Add(15 * time.Second)
	for {
		tg := r.health()["bridge:tg"]
		if tg.Restarts >= 1 && tg.State != supervise.Stopped {
			if !strings.Contains(tg.LastError, "getMe") {
				t.Errorf("bridge:tg = %+v, want the getMe error as its last", tg)
			}
			break
		}
		if tg.State == supervise.Stopped || time.Now().After(deadline) {
			t.Fatalf("bridge:tg = %+v, want it restarted", tg)
		}
		time.Sleep(10 * time.Millisecond) // polling the supervisor
	}
}
