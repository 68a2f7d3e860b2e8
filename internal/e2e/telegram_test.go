package e2e

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/internal/tgtest"
)

func TestTelegramGroupAndPrivateChat(t *testing.T) {
	t.Parallel()
	fake, url := fakeLLM(t)
	tg := &tgtest.Server{Token: "123456:ABC", Bot: tgtest.User{ID: 777, IsBot: true, FirstName: "Cyan", Username: "cyan_bot"}}
	api := httptest.NewServer(tg)
	defer api.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "cyan-test.yaml")
	yaml := "bridges:\n  telegram:\n    - {name: tg, token: \"123456:ABC\", api_url: " + api.URL + ", poll_timeout: 2s}\n" +
		"    - {name: tgbad, token: \"999:nope\", api_url: " + api.URL + "}\n" + qqManners
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	d := start(t, data, env(data, url, "CYAN_CONFIG="+cfg))
	fake.SetDefault(func(req llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "@last_Amy hi @Amy!\n@br\nsecond part"}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := tg.WaitCalls(ctx, 1, "deleteWebhook"); err != nil {
		t.Fatal(err)
	}
	amy := &tgtest.User{ID: 1, FirstName: "Amy"}
	grp := tgtest.Chat{ID: -1001, Type: "supergroup", Title: "friends"}
	tg.Push(tgtest.Message{From: amy, Chat: grp, Text: "nice weather"})
	asked := tg.Push(tgtest.Message{From: amy, Chat: grp, Text: "@cyan_bot what do you think?", Entities: []tgtest.Entity{{Type: "mention", Offset: 0, Length: 9}}})
	sent, err := tg.WaitCalls(ctx, 2, "sendMessage")
	if err != nil {
		_, bs, _ := d.get("/api/v1/bridges")
		t.Fatalf("%v\n%v\n%v", err, bs, d.messages(t, "tg:group:-1001"))
	}
	var ents []tgtest.Entity
	json.Unmarshal([]byte(sent[0].Params["entities"]), &ents)
	if sent[0].Params["text"] != "hi Amy!" || len(ents) != 1 || ents[0].User.ID != 1 || !strings.Contains(sent[0].Params["reply_parameters"], `"message_id":`+itoa(asked)) {
		t.Errorf("first part: %v", sent[0].Params)
	}
	if sent[1].Params["text"] != "second part" || sent[1].Params["chat_id"] != "-1001" {
		t.Errorf("second part: %v", sent[1].Params)
	}
	if a := tg.Calls("sendChatAction"); len(a) == 0 || a[0].Params["action"] != "typing" {
		t.Errorf("no typing shown: %v", a)
	}
	if n := len(chatRequests(fake)); n != 1 {
		t.Errorf("%d turns, want 1 (the first message did not address the bot)", n)
	}
	if ms := d.messages(t, "tg:group:-1001"); len(ms) != 4 || ms[0]["text"] != "nice weather" {
		t.Errorf("history: %v", ms)
	}
	tg.Push(tgtest.Message{From: amy, Chat: tgtest.Chat{ID: 1, Type: "private"}, Text: "just us"})
	if _, err := tg.WaitCalls(ctx, 4, "sendMessage"); err != nil {
		t.Fatal(err)
	}
	waitLog(t, d, "the Bot API refused the token")
	if log := d.stderr.String(); !strings.Contains(log, "tgbad") {
		t.Errorf("the bad bot's token problem is not logged:\n%s", log)
	}
	stdout, _, _ := cli(t, d.cliEnv(), "", "bridges")
	if !strings.Contains(stdout, "tgbad") || !strings.Contains(stdout, "refused the token") {
		t.Errorf("cyan bridges:\n%s", stdout)
	}
	stdout, _, rc := cli(t, d.cliEnv(), "", "doctor")
	if rc == 0 || !strings.Contains(stdout, "[ok  ] bridge tg Telegram bot Cyan (id 777) connected") ||
		!strings.Contains(stdout, "[FAIL] bridge tgbad Telegram: the Bot API refused the token") || !strings.Contains(stdout, "@BotFather") {
		t.Errorf("cyan doctor: %d\n%s", rc, stdout)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
