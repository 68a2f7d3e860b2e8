package cmd

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A daemon's /api/v1/bridges answer with a reply given up, a turn too old
// to resume and two private writers, one of them the owner.
const bridgesDoc = `{"bridges": [{"name": "tg", "platform": "telegram", "connected": true, "self": "777",
  "undelivered": [{"channel": "tg:private:2", "key": "k1", "text": "a long story", "reason": "Forbidden: bot was blocked by the user", "at": "2026-05-01T12:00:00Z"}],
  "stale": [{"channel": "tg:group:-1002:42", "message_id": "m9", "speaker": "Amy", "speaker_id": "tg:1", "at": "2026-05-01T11:00:00Z"}],
  "writers": [{"id": "4242", "name": "Ben", "username": "ben", "last": "2026-05-01T12:00:00Z", "owner": false, "line": "id:tg:4242"},
              {"id": "1", "name": "Amy", "last": "2026-05-01T10:00:00Z", "owner": true, "line": "id:tg:1"}]}]}`

func bridgesEnv(t *testing.T) func(string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/bridges" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(bridgesDoc))
	}))
	t.Cleanup(srv.Close)
	vars := map[string]string{"CYAN_ADDR": strings.TrimPrefix(srv.URL, "http://"), "CYAN_DATA_DIR": t.TempDir()}
	return func(k string) string { return vars[k] }
}

func TestBridgesWhoListsTheLinesToAdd(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main([]string{"bridges", "who"}, IO{Stdout: &out, Stderr: &errb, Env: bridgesEnv(t)}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"BRIDGE", "4242", "Ben @ben", "id:tg:4242", "yes", "owners: [local, \"id:tg:4242\"]"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("cyan bridges who lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if code := Main([]string{"bridges", "who", "--json"}, IO{Stdout: &out, Stderr: &errb, Env: bridgesEnv(t)}); code != 0 ||
		!strings.Contains(out.String(), `"line": "id:tg:4242"`) || !strings.Contains(out.String(), `"bridge": "tg"`) {
		t.Errorf("cyan bridges who --json: %d\n%s", code, out.String())
	}
}

func TestBridgesLsListsWhatWasNotDeliveredOrResumed(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main([]string{"bridges", "ls"}, IO{Stdout: &out, Stderr: &errb, Env: bridgesEnv(t)}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"not delivered:", "tg:private:2", "blocked by the user", "not resumed:", "tg:group:-1002:42", "Amy", "resume_max_age"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("cyan bridges ls lacks %q:\n%s", want, out.String())
		}
	}
}
