package api

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// A backup and an export do work on the server: they are POSTs, and a GET
// of either (a chat image's URL pointing at the API, a page's <img>) gets
// a 405 that names the method, and runs nothing.
func TestBackupAndExportArePosts(t *testing.T) {
	r := newRig(t, nil)
	if code, _ := r.do(t, "POST", "/api/v1/messages", `{"channel":"home","user":"alice","text":"hello","no_reply":true}`); code != 200 {
		t.Fatalf("post a message: %d", code)
	}
	for _, tc := range []struct {
		name, path, what, body string
	}{
		{"export", "/api/v1/export", "an export", `"cyan-export"`},
		{"export jsonl", "/api/v1/export?format=jsonl", "an export", `"cyan-export"`},
		{"backup", "/api/v1/backup", "a backup", "\x1f\x8b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := r.do(t, "GET", tc.path, "")
			e, _ := out["error"].(map[string]any)
			msg, _ := e["message"].(string)
			if code != http.StatusMethodNotAllowed || errType(out) != "method_not_allowed" || !strings.Contains(msg, "POST "+strings.Split(tc.path, "?")[0]) || !strings.HasPrefix(msg, tc.what) {
				t.Fatalf("GET %s: %d %v", tc.path, code, out)
			}
			req, _ := http.NewRequest("GET", r.srv.URL+tc.path, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.Header.Get("Allow") != "POST" {
				t.Errorf("GET %s: Allow %q, want POST", tc.path, resp.Header.Get("Allow"))
			}
			req, _ = http.NewRequest("POST", r.srv.URL+tc.path, nil)
			req.Header.Set("Content-Type", "application/json")
			resp, err = http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 || !strings.Contains(string(body), tc.body) {
				t.Fatalf("POST %s: %d %.200q", tc.path, resp.StatusCode, body)
			}
		})
	}
}
