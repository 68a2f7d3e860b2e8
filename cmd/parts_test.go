package cmd

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/api"
	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/router"
	"github.com/cyan-agent/cyan/supervise"
)

// TestDoctorShowsTheParts: cyan doctor reads /healthz into the API's own
// type and says which parts run, which restart (with their last error)
// and which outputs wait.
func TestDoctorShowsTheParts(t *testing.T) {
	retry := time.Date(2026, 11, 23, 12, 0, 5, 0, time.UTC)
	h := api.Health{OK: true, Degraded: true, Parts: []supervise.State{
		{Name: "api", State: supervise.Running},
		{Name: "qq", State: supervise.Restarting, Restarts: 3, LastError: "panic: nil map", Retry: retry},
		{Name: "extra-tools", State: supervise.Stopped, LastError: "inotify is not available"},
	}, Components: []router.Status{{Name: "qq", Pending: 2, LastError: "connection refused"}, {Name: "page", Attached: true}}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(h)
	}))
	defer srv.Close()
	checks := checkParts(&config.Config{Addr: strings.TrimPrefix(srv.URL, "http://"), DataDir: t.TempDir()})
	var lines []string
	for _, c := range checks {
		lines = append(lines, c.name+": "+c.msg)
	}
	got := strings.Join(lines, "\n")
	for _, want := range []string{
		"parts: 1 of 3 parts running; outputs: qq, page",
		"part: qq is restarting (3 restarts; next try " + localTime(retry) + "): panic: nil map",
		"part: extra-tools is stopped: inotify is not available",
		"output: qq has 2 messages waiting (attached false): connection refused",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("doctor's lines lack %q:\n%s", want, got)
		}
	}
	if checks[0].ok || !checks[0].warn {
		t.Errorf("a restarting part is a warning: %+v", checks[0])
	}
}
