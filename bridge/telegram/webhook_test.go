package telegram

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/tgtest"
)

func TestWebhookModeChecksTheSecret(t *testing.T) {
	fake := &tgtest.Server{Token: "123:abc", Bot: botUser}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	a, err := New(Options{Name: "tg", Token: "123:abc", APIURL: srv.URL, WebhookURL: "https://bot.example.org" + WebhookPath("tg"), WebhookSecret: "s3cret-s3cret-s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	s := new(sink)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, s) }()
	defer func() { cancel(); <-done }()
	s.until(t, "connected", func() bool { return len(s.self) == 1 })
	if c := fake.Calls("setWebhook"); len(c) != 1 || c[0].Params["url"] != "https://bot.example.org/telegram/tg/webhook" || c[0].Params["secret_token"] != "s3cret-s3cret-s3cret" {
		t.Fatalf("setWebhook: %+v", c)
	}
	if c := fake.Calls("getUpdates"); len(c) != 0 {
		t.Errorf("polled in webhook mode: %d", len(c))
	}
	hook := httptest.NewServer(a.Webhook())
	defer hook.Close()
	post := func(secret, text string) {
		body := `{"update_id":1,"message":{"message_id":3,"from":{"id":1,"first_name":"Amy"},"chat":{"id":1,"type":"private"},"date":1,"text":"` + text + `"}}`
		req, _ := http.NewRequest("POST", hook.URL, strings.NewReader(body))
		req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	post("wrong", "forged")
	post("s3cret-s3cret-s3cret", "real")
	s.until(t, "the real update", func() bool { return len(s.msgs) >= 1 })
	time.Sleep(50 * time.Millisecond)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.msgs) != 1 || s.msgs[0].Text() != "real" {
		t.Errorf("heard %d messages: %+v", len(s.msgs), s.msgs)
	}
}
