package tgtest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func call(t *testing.T, url, method string, p map[string]string) (int, map[string]any) {
	t.Helper()
	resp, err := http.PostForm(url+"/bot1:x/"+method, Form(p))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out
}

func ids(t *testing.T, out map[string]any) []int {
	t.Helper()
	var got []int
	for _, u := range out["result"].([]any) {
		got = append(got, int(u.(map[string]any)["update_id"].(float64)))
	}
	return got
}

func TestGetUpdatesOffsetConfirmsAndForgets(t *testing.T) {
	s := &Server{Token: "1:x", FirstUpdateID: 900}
	srv := httptest.NewServer(s)
	defer srv.Close()
	for range 5 {
		s.Push(Message{Chat: Chat{ID: 1, Type: "private"}, Text: "hi"})
	}
	if _, out := call(t, srv.URL, "getUpdates", nil); len(ids(t, out)) != 5 || ids(t, out)[0] != 900 {
		t.Fatalf("offset 0: %v", ids(t, out))
	}
	if _, out := call(t, srv.URL, "getUpdates", map[string]string{"offset": "902", "limit": "2"}); len(ids(t, out)) != 2 || ids(t, out)[0] != 902 {
		t.Errorf("offset 902 limit 2: %v", ids(t, out))
	}
	// 900 and 901 were confirmed: offset 0 no longer sees them
	if _, out := call(t, srv.URL, "getUpdates", nil); ids(t, out)[0] != 902 {
		t.Errorf("after the confirmation: %v", ids(t, out))
	}
	if _, out := call(t, srv.URL, "getUpdates", map[string]string{"offset": "-1"}); len(ids(t, out)) != 1 || ids(t, out)[0] != 904 {
		t.Errorf("offset -1: %v", ids(t, out))
	}
	if s.Pending() != 1 {
		t.Errorf("pending %d, want 1", s.Pending())
	}
}

func TestSendMessageLimitsTopicsAndFlood(t *testing.T) {
	s := &Server{Token: "1:x"}
	srv := httptest.NewServer(s)
	defer srv.Close()
	s.AddTopic(-5, 42)
	tests := []struct {
		name string
		p    map[string]string
		code int
		desc string
	}{
		{"4096 characters", map[string]string{"chat_id": "1", "text": strings.Repeat("я", 4096)}, 200, ""},
		{"4097 characters", map[string]string{"chat_id": "1", "text": strings.Repeat("я", 4097)}, 400, "Bad Request: message is too long"},
		{"empty", map[string]string{"chat_id": "1", "text": ""}, 400, "Bad Request: message text is empty"},
		{"topic", map[string]string{"chat_id": "-5", "text": "x", "message_thread_id": "42"}, 200, ""},
		{"general as a thread", map[string]string{"chat_id": "-5", "text": "x", "message_thread_id": "1"}, 400, "Bad Request: message thread not found"},
		{"missing topic", map[string]string{"chat_id": "-5", "text": "x", "message_thread_id": "7"}, 400, "Bad Request: message thread not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out := call(t, srv.URL, "sendMessage", tt.p)
			if code != tt.code || (tt.desc != "" && out["description"] != tt.desc) {
				t.Errorf("%d %v", code, out)
			}
			if tt.name == "topic" {
				m := out["result"].(map[string]any)
				if m["message_thread_id"] != float64(42) || m["is_topic_message"] != true {
					t.Errorf("sent topic message %v", m)
				}
			}
		})
	}
	s.FailSend(Failure{Code: 429, RetryAfter: 3})
	code, out := call(t, srv.URL, "sendMessage", map[string]string{"chat_id": "1", "text": "x"})
	if code != 429 || out["description"] != "Too Many Requests: retry after 3" || out["parameters"].(map[string]any)["retry_after"] != float64(3) {
		t.Errorf("429: %d %v", code, out)
	}
}
