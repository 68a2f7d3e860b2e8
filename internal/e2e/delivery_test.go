package e2e

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/internal/onebottest"
	"github.com/cyan-agent/cyan/internal/tgtest"
	"github.com/cyan-agent/cyan/llm"
)

// longAnswer is a 10,000-character answer of numbered sentences in
// paragraphs, so a piece lost, doubled or out of order shows.
func longAnswer() string {
	var b strings.Builder
	for i := 0; b.Len() < 10000; i++ {
		fmt.Fprintf(&b, "Sentence %04d of the long answer. ", i)
		if i%12 == 11 {
			b.WriteString("\n\n")
		}
	}
	return strings.TrimSpace(b.String())[:10000]
}

// longAnswers lets an answer be 10,000 characters (limits.max_output_chars
// is 8000 by default).
const longAnswers = "limits: {max_output_chars: 20000}\n"

// words is s without its whitespace, which the cuts between pieces drop.
func words(s string) string { return strings.Join(strings.Fields(s), " ") }

// tgRig is cyan with the Telegram bridge "tg" against the fake Bot API.
type tgRig struct {
	d    *daemon
	fake *llmtest.Server
	tg   *tgtest.Server
	envv []string
	data string
}

func newTGRig(t *testing.T, extra string) *tgRig {
	t.Helper()
	fake, url := fakeLLM(t)
	tg := &tgtest.Server{Token: "123456:ABC", Bot: tgtest.User{ID: 777, IsBot: true, FirstName: "Cyan", Username: "cyan_bot"}, FirstUpdateID: 70000}
	api := httptest.NewServer(tg)
	t.Cleanup(api.Close)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "cyan-test.yaml")
	yaml := "bridges:\n  telegram:\n    - {name: tg, token: \"123456:ABC\", api_url: " + api.URL + ", poll_timeout: 2s}\n" + qqManners + extra + longAnswers
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &tgRig{fake: fake, tg: tg, data: filepath.Join(dir, "data")}
	r.envv = env(r.data, url, "CYAN_CONFIG="+cfg)
	r.start(t)
	return r
}

func (r *tgRig) start(t *testing.T) {
	t.Helper()
	n := len(r.tg.Calls("deleteWebhook"))
	r.d = start(t, r.data, r.envv)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := r.tg.WaitCalls(ctx, n+1, "deleteWebhook"); err != nil {
		t.Fatal(err)
	}
}

func (r *tgRig) sent(t *testing.T, n int) []tgtest.Call {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	calls, err := r.tg.WaitCalls(ctx, n, "sendMessage")
	if err != nil {
		t.Fatalf("%v\n%s", err, r.d.stderr.String())
	}
	return calls
}

func TestTelegramLongAnswerArrivesWholeInOrderAndTopicsAreAnswered(t *testing.T) {
	t.Parallel()
	r := newTGRig(t, "")
	answer := longAnswer()
	r.fake.SetDefault(func(req llmtest.Request) llmtest.Reply {
		if strings.Contains(req.Messages[len(req.Messages)-1].Content, "in the topic") {
			return llmtest.Reply{Text: "answered in the topic"}
		}
		return llmtest.Reply{Text: answer}
	})
	amy := &tgtest.User{ID: 1, FirstName: "Amy"}
	r.tg.Push(tgtest.Message{From: amy, Chat: tgtest.Chat{ID: 1, Type: "private"}, Text: "tell me everything"})
	sent := r.sent(t, 3)
	var got []string
	for _, c := range sent {
		if n := len([]rune(c.Params["text"])); n > tgtest.MaxText || c.Params["chat_id"] != "1" {
			t.Errorf("a piece of %d characters to %s", n, c.Params["chat_id"])
		}
		got = append(got, c.Params["text"])
	}
	if words(strings.Join(got, " ")) != words(answer) {
		t.Fatalf("the pieces do not make the answer in order: %d pieces", len(got))
	}
	// a forum topic is its own conversation, answered in the topic
	forum := tgtest.Chat{ID: -1002, Type: "supergroup", Title: "forum", IsForum: true}
	r.tg.AddTopic(forum.ID, 42)
	root := &tgtest.Message{MessageID: 42, From: amy, Chat: forum, Text: "a topic"}
	r.tg.Push(tgtest.Message{From: amy, Chat: forum, MessageThreadID: 42, IsTopicMessage: true, ReplyTo: root,
		Text: "@cyan_bot hello in the topic", Entities: []tgtest.Entity{{Type: "mention", Offset: 0, Length: 9}}})
	last := r.sent(t, 4)[3]
	if last.Params["text"] != "answered in the topic" || last.Params["chat_id"] != "-1002" || last.Params["message_thread_id"] != "42" {
		t.Errorf("the topic's answer: %v", last.Params)
	}
	if ms := r.d.messages(t, "tg:group:-1002:42"); len(ms) != 2 || !strings.Contains(ms[0]["text"].(string), "hello in the topic") {
		t.Errorf("the topic's channel holds %v", ms)
	}
	for _, c := range r.tg.Calls("sendChatAction") {
		if c.Params["chat_id"] == "-1002" && c.Params["message_thread_id"] != "42" {
			t.Errorf("typing outside the topic: %v", c.Params)
		}
	}
	// a reply the platform refuses for good is told to the model at its
	// next turn in that chat, and listed by cyan bridges. The failure is
	// armed once the four sends so far are settled delivered: the fake
	// counts a call before it answers it, so the topic's answer, counted
	// and not yet answered, would take the failure meant for the next.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		_, out, _ := r.d.get("/api/v1/bridges")
		if list, _ := out["bridges"].([]any); len(list) == 1 && list[0].(map[string]any)["sent"] == 4.0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the four sends were never settled: %v", out)
		}
	}
	r.tg.FailSend(tgtest.Failure{Code: 403, Description: "Forbidden: bot was blocked by the user"})
	ben := &tgtest.User{ID: 2, FirstName: "Ben"}
	r.tg.Push(tgtest.Message{From: ben, Chat: tgtest.Chat{ID: 2, Type: "private"}, Text: "in the topic? no, just hi"})
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(cliOut(t, r.d, "bridges"), "not delivered"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("cyan bridges never listed the reply not delivered:\n%s", cliOut(t, r.d, "bridges"))
		}
	}
	if out := cliOut(t, r.d, "bridges"); !strings.Contains(out, "tg:private:2") || !strings.Contains(out, "blocked by the user") {
		t.Errorf("cyan bridges:\n%s", out)
	}
	n := len(chatRequests(r.fake))
	r.tg.Push(tgtest.Message{From: ben, Chat: tgtest.Chat{ID: 2, Type: "private"}, Text: "hello?"})
	r.sent(t, 6) // the three pieces, the topic's, the refused one, this one
	reqs := chatRequests(r.fake)
	if len(reqs) != n+1 || !strings.Contains(fmt.Sprint(reqs[n].System, reqs[n].Messages), "could not be delivered") {
		t.Errorf("the model was not told of the reply not delivered: %v", reqs[len(reqs)-1].Messages)
	}
}

// cliOut runs a cyan command against d and returns its output.
func cliOut(t *testing.T, d *daemon, args ...string) string {
	t.Helper()
	out, _, _ := cli(t, d.cliEnv(), "", args...)
	return out
}

func TestQQLongAnswerArrivesWholeInOrder(t *testing.T) {
	t.Parallel()
	r := newQQRig(t, longAnswers)
	answer := longAnswer()
	r.fake.SetDefault(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: answer} })
	if _, err := r.impl.Private(onebottest.Sender{UserID: 1001, Nickname: "owner"}, onebottest.Text("tell me everything")); err != nil {
		t.Fatal(err)
	}
	calls := r.sends(t, 4)
	var got []string
	for _, c := range calls {
		if n := len([]rune(c.Text())); n > 3000 {
			t.Errorf("a piece of %d characters", n)
		}
		got = append(got, c.Text())
	}
	if words(strings.Join(got, " ")) != words(answer) {
		t.Fatalf("the pieces do not make the answer in order: %d pieces", len(got))
	}
}

func TestTelegramTurnCutByARestartIsAnsweredOnceAcrossTwoRestarts(t *testing.T) {
	t.Parallel()
	r := newTGRig(t, "")
	r.fake.SetDefault(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "too late", Delay: 5 * time.Minute} })
	r.tg.Push(tgtest.Message{From: &tgtest.User{ID: 1, FirstName: "Amy"}, Chat: tgtest.Chat{ID: 1, Type: "private"}, Text: "are you there?"})
	for deadline := time.Now().Add(20 * time.Second); len(chatRequests(r.fake)) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the turn never started\n%s", r.d.stderr.String())
		}
	}
	r.d.stop(syscall.SIGTERM) // mid-turn
	r.fake.SetDefault(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "here I am"} })
	r.start(t)
	if sent := r.sent(t, 1); sent[0].Params["text"] != "here I am" || sent[0].Params["chat_id"] != "1" {
		t.Fatalf("after the restart: %v", sent[0].Params)
	}
	waitLog(t, r.d, "a turn cut by the restart runs now")
	turns := len(chatRequests(r.fake))
	r.d.stop(syscall.SIGTERM)
	r.start(t)
	// the second start has nothing owed: wait until it has polled twice,
	// then nothing more may have been asked or sent
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := r.tg.WaitCalls(ctx, len(r.tg.Calls("getUpdates"))+2, "getUpdates"); err != nil {
		t.Fatal(err)
	}
	if c := r.tg.Calls("sendMessage"); len(c) != 1 {
		var got []string
		for _, x := range c {
			got = append(got, x.Params["text"])
		}
		t.Errorf("%d messages sent in all, want 1: %q\n%s", len(c), got, r.d.stderr.String())
	}
	if n := len(chatRequests(r.fake)); n != turns {
		t.Errorf("%d model calls after the second restart, want %d", n, turns)
	}
	if strings.Contains(r.d.stderr.String(), "a turn cut by the restart runs now") {
		t.Errorf("the second restart resumed the turn again:\n%s", r.d.stderr.String())
	}
}

// TestTheOwnerIsTheSameOnThePageTheTerminalAndQQ configures owners as the
// README does and checks that what the owner asked to remember in one
// place reaches their prompt in the others — and not a stranger's.
func TestTheOwnerIsTheSameOnThePageTheTerminalAndQQ(t *testing.T) {
	t.Parallel()
	fake, url := fakeLLM(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	cfg := filepath.Join(dir, "cyan.yaml")
	yaml := "bridges:\n  onebot:\n    - {name: qq, mode: reverse, access_token: tok}\n" + qqManners +
		"permissions:\n  owners: [local, \"id:qq:1001\"]\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	envv := env(data, url, "CYAN_CONFIG="+cfg)
	d := start(t, data, envv)
	impl := &onebottest.Impl{SelfID: botQQ, Nickname: "青蓝", Token: "tok"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := impl.Connect(ctx, "ws"+strings.TrimPrefix(d.base, "http")+"/onebot/v11/ws"); err != nil {
		t.Fatal(err)
	}
	const secret = "my locker code is 4711"
	// the owner, on the terminal, as the terminal sends it (no name, no id)
	fake.Enqueue(
		llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "r", Name: "remember", Arguments: fmt.Sprintf(`{"text":%q}`, secret)}}},
		llmtest.Reply{Text: fmt.Sprintf(`{"action":"add","kind":"note","content":%q}`, secret)},
		llmtest.Reply{Text: "noted"},
	)
	if out, errb, rc := cli(t, d.cliEnv(), "", "send", "please remember: "+secret); rc != 0 || !strings.Contains(out, "noted") {
		t.Fatalf("cyan send: %d %s %s", rc, out, errb)
	}
	sees := func(where string) bool {
		reqs := chatRequests(fake)
		return strings.Contains(reqs[len(reqs)-1].System, "locker code is 4711")
	}
	fake.SetDefault(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "hi"} })
	// the page, as the page sends it: {channel, user: "", text}
	if code, out, _ := d.post("/api/v1/messages", map[string]any{"channel": "desktop", "user": "", "text": "hello"}); code != 200 {
		t.Fatalf("the page's message: %d %v", code, out)
	}
	if !sees("the page") {
		t.Error("the page does not see the owner's private item")
	}
	if _, _, rc := cli(t, d.cliEnv(), "", "send", "--channel", "kitchen", "hello again"); rc != 0 || !sees("the terminal") {
		t.Errorf("the terminal (rc %d) does not see the owner's private item", rc)
	}
	// the owner's QQ private chat
	n := len(chatRequests(fake))
	if _, err := impl.Private(onebottest.Sender{UserID: 1001, Nickname: "me"}, onebottest.Text("hi from QQ")); err != nil {
		t.Fatal(err)
	}
	if _, err := impl.WaitCalls(ctx, 1, "send_private_msg"); err != nil {
		t.Fatal(err)
	}
	if len(chatRequests(fake)) != n+1 || !sees("QQ") {
		t.Error("the owner's QQ private chat does not see the owner's private item")
	}
	// a stranger's QQ private chat does not
	if _, err := impl.Private(onebottest.Sender{UserID: 2002, Nickname: "eve"}, onebottest.Text("hi, what do you know?")); err != nil {
		t.Fatal(err)
	}
	if _, err := impl.WaitCalls(ctx, 2, "send_private_msg"); err != nil {
		t.Fatal(err)
	}
	if sees("a stranger") {
		t.Error("a stranger's private chat sees the owner's private item")
	}
	// cyan bridges who names both, with the line to add; config check
	// shows the owners
	out, _, rc := cli(t, d.cliEnv(), "", "bridges", "who")
	if rc != 0 || !strings.Contains(out, "id:qq:2002") || !strings.Contains(out, "id:qq:1001") {
		t.Errorf("cyan bridges who: %d\n%s", rc, out)
	}
	out, _, rc = cli(t, d.cliEnv(), "", "config", "check")
	if rc != 0 || !strings.Contains(out, "- local") || !strings.Contains(out, "# the owner is local (the terminal, the page, your API calls") || !strings.Contains(out, "id:qq:1001") {
		t.Errorf("cyan config check: %d\n%s", rc, out)
	}
}

func TestQQTurnCutByARestartIsAnsweredOnceAcrossTwoRestarts(t *testing.T) {
	t.Parallel()
	r := newQQRig(t, "")
	r.fake.SetDefault(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "too late", Delay: 5 * time.Minute} })
	r.say(t, 1, "amy", onebottest.At(fmt.Sprint(botQQ)), onebottest.Text(" are you there?"))
	for deadline := time.Now().Add(20 * time.Second); len(chatRequests(r.fake)) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the turn never started\n%s", r.d.stderr.String())
		}
	}
	r.d.stop(syscall.SIGTERM) // mid-turn
	r.fake.SetDefault(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "here I am"} })
	r.d = start(t, r.d.dataDir, r.envv)
	r.connect(t)
	if calls := r.sends(t, 1); calls[0].Text() != "here I am" {
		t.Fatalf("after the restart: %q", texts(calls))
	}
	waitLog(t, r.d, "a turn cut by the restart runs now")
	turns := len(chatRequests(r.fake))
	r.d.stop(syscall.SIGTERM)
	r.d = start(t, r.d.dataDir, r.envv)
	r.connect(t)
	// a message that asks nothing, stored, shows the bridge has settled
	r.say(t, 2, "ben", onebottest.Text("just chatting"))
	r.stored(t, 2)
	time.Sleep(time.Second) // longer than debounce + max_wait: no turn may start
	if n := len(r.impl.Calls("send_group_msg")); n != 1 {
		t.Errorf("%d messages sent in all, want 1", n)
	}
	if n := len(chatRequests(r.fake)); n != turns {
		t.Errorf("%d model calls after the second restart, want %d", n, turns)
	}
	if strings.Contains(r.d.stderr.String(), "a turn cut by the restart runs now") {
		t.Errorf("the second restart resumed the turn again")
	}
}

func TestTelegramTurnTooOldToResumeIsListed(t *testing.T) {
	t.Parallel()
	r := newTGRig(t, "  resume_max_age: 1s\n")
	r.fake.SetDefault(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "too late", Delay: 5 * time.Minute} })
	r.tg.Push(tgtest.Message{From: &tgtest.User{ID: 1, FirstName: "Amy"}, Chat: tgtest.Chat{ID: 1, Type: "private"}, Text: "are you there?"})
	for deadline := time.Now().Add(20 * time.Second); len(chatRequests(r.fake)) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the turn never started\n%s", r.d.stderr.String())
		}
	}
	r.d.stop(syscall.SIGTERM)
	time.Sleep(1500 * time.Millisecond) // past resume_max_age: the message is too old when the daemon starts
	r.start(t)
	out := cliOut(t, r.d, "bridges")
	if !strings.Contains(out, "not resumed") || !strings.Contains(out, "tg:private:1") || !strings.Contains(out, "Amy") {
		t.Errorf("cyan bridges:\n%s", out)
	}
	if n := len(chatRequests(r.fake)); n != 1 {
		t.Errorf("%d model calls, want 1: a turn too old is not resumed", n)
	}
}
