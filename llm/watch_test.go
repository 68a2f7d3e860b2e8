package llm

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestWatchedMarksTheModelDown: a refused key marks the model down, a bad
// request says nothing about it, and a call that succeeds clears it.
func TestWatchedMarksTheModelDown(t *testing.T) {
	status := http.StatusUnauthorized
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if status != http.StatusOK {
			w.WriteHeader(status)
			_, _ = w.Write([]byte(`{"error":{"message":"no"}}`))
			return
		}
		_, _ = w.Write([]byte(`{"choices":[{"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`))
	}))
	defer srv.Close()
	c, err := New(Options{BaseURL: srv.URL + "/v1", Model: "m", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	w := Watch(c, nil)
	req := Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}}
	if _, err := w.Chat(context.Background(), req); KindOf(err) != Auth {
		t.Fatalf("401: %v", err)
	}
	if d := w.Down(); d == nil || d.Kind != Auth {
		t.Fatalf("after a refused key: %+v", d)
	}
	status = http.StatusBadRequest
	if _, err := w.Chat(context.Background(), req); KindOf(err) != BadRequest {
		t.Fatalf("400: %v", err)
	}
	if d := w.Down(); d == nil || d.Kind != Auth {
		t.Fatalf("a bad request changed the mark: %+v", d)
	}
	status = http.StatusOK
	if _, err := w.Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if d := w.Down(); d != nil {
		t.Fatalf("after a call that succeeded: %+v", d)
	}
	var none *Watched
	if none.Down() != nil {
		t.Fatal("a nil Watched is down")
	}
}
