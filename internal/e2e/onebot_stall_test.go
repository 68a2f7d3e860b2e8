package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/internal/onebottest"
)

// stallServer serves images that never arrive: each request is held until
// the client gives up.
func stallServer(t *testing.T) (string, func() int) {
	t.Helper()
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		mu.Unlock()
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() int {
		mu.Lock()
		defer mu.Unlock()
		return n
	}
}

// TestQQStalledImagesDelayNoOtherChat: Lagrange.OneBot with its 5 s
// heartbeat, connected at the reverse path with a trailing slash; a group
// sends a message with three images that never download every 2 s for
// 16 s. Meanwhile the owner's private messages are answered as soon as a
// private message is answered at all — each before the stalled group
// message it followed is even stored — and the link stays up: one
// connection, no "no heartbeat", the bridge connected throughout. Each
// stalled message is stored once its 10 s budget runs out, its images
// named as not downloaded.
func TestQQStalledImagesDelayNoOtherChat(t *testing.T) {
	t.Parallel()
	fake, url := fakeLLM(t)
	fake.SetDefault(func(req llmtest.Request) llmtest.Reply {
		last := req.Messages[len(req.Messages)-1].Content
		if strings.Contains(last, "owner asks") {
			return llmtest.Reply{Text: "here for you"}
		}
		return llmtest.Reply{Text: "ok"}
	})
	dir := t.TempDir()
	cfg := filepath.Join(dir, "cyan-test.yaml")
	// The images' server stands for the implementation's own file server
	// on loopback: only a configured origin may be fetched there.
	images, requests := stallServer(t)
	yaml := "permissions:\n  owners: [\"id:qq:1001\"]\n" +
		"bridges:\n  onebot:\n    - {name: qq, mode: reverse, access_token: tok, media_origins: [\"" + strings.TrimPrefix(images, "http://") + "\"]}\n" + qqManners
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	r := &qqRig{fake: fake, dir: dir, cfg: cfg}
	r.envv = env(data, url, "CYAN_CONFIG="+cfg)
	r.d = start(t, data, r.envv)
	r.impl = &onebottest.Impl{SelfID: botQQ, Nickname: "青蓝", Token: "tok", Lagrange: true} // 5 s heartbeat
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.impl.Connect(ctx, r.wsURL()+"/"); err != nil {
		t.Fatalf("connect at the path with a trailing slash: %v", err)
	}
	// Connected and logged in: the login's answer (the bot's name) posts the
	// state again, with a new since.
	since := r.waitBridge(t, func(b map[string]any) bool {
		return b["connected"] == true && b["self_name"] != nil && b["self_name"] != ""
	})["since"]

	owner := onebottest.Sender{UserID: 1001, Nickname: "hareru"}
	ask := func(i int) time.Duration {
		t.Helper()
		before := len(r.impl.Calls("send_private_msg"))
		began := time.Now()
		if _, err := r.impl.Private(owner, onebottest.Text(fmt.Sprint("owner asks ", i))); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(20 * time.Second); len(r.impl.Calls("send_private_msg")) <= before; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the owner's message %d was never answered\n%s", i, r.d.stderr.String())
			}
		}
		return time.Since(began)
	}
	normal := ask(0) // the answer's normal time, nothing stalled

	at := onebottest.At(fmt.Sprint(botQQ))
	stalledAt := time.Now()
	var latencies []time.Duration
	for i := 1; i <= 8; i++ {
		img := func(k int) onebottest.Seg {
			return onebottest.Image(fmt.Sprintf("p%d-%d.jpg", i, k), fmt.Sprintf("%s/p%d-%d.jpg", images, i, k))
		}
		r.say(t, 2, "ben", at, onebottest.Text(fmt.Sprint(" look at these ", i)), img(1), img(2), img(3))
		lat := ask(i)
		latencies = append(latencies, lat)
		// The owner was answered before the stalled message was stored:
		// nothing waited for its images.
		for _, m := range r.d.messages(t, fmt.Sprintf("qq:group:%d", groupQ)) {
			if strings.Contains(fmt.Sprint(m["text"]), fmt.Sprint("look at these ", i)) {
				t.Fatalf("the owner's answer %d came only after the stalled group message was stored (%s)", i, lat)
			}
		}
		time.Sleep(2*time.Second - lat%(2*time.Second)) // the group's pace, not a wait for cyan
	}
	t.Logf("private answer: %s with nothing stalled; during the stalls %v", normal, latencies)
	if requests() < 3 {
		t.Errorf("the images were never asked for (%d requests)", requests())
	}
	// The stalled messages are stored once their budget runs out.
	users := r.stored(t, 8)
	for _, u := range users {
		if txt := fmt.Sprint(u["text"]); !strings.Contains(txt, "not downloaded: still loading after 10s") {
			t.Errorf("a stalled message stored as %q", txt)
		}
	}
	b := r.waitBridge(t, func(b map[string]any) bool { return true })
	if b["connected"] != true || b["since"] != since || !r.impl.Connected() {
		t.Fatalf("the link dropped during %s of stalls: %v\n%s", time.Since(stalledAt).Round(time.Second), b, r.d.stderr.String())
	}
	if log := r.d.stderr.String(); strings.Contains(log, "no heartbeat") {
		t.Fatalf("the heartbeat watch closed a live link:\n%s", log)
	}
}

// TestQQWrongForwardTokenBacksOff: NapCat's forward server with another
// token answers each connection with the 1403 frame and closes. cyan
// names the wrong access_token, backs off (2 attempts in the first 8 s —
// the schedule to minutes, which the dialer learns and the supervisor
// keeps, is asserted on a fake clock in bridge/onebot
// TestWrongForwardTokenBacksOffToMinutes), and cyan bridges and cyan
// doctor name the setting to match.
func TestQQWrongForwardTokenBacksOff(t *testing.T) {
	t.Parallel()
	fake, url := fakeLLM(t)
	_ = fake
	impl := &onebottest.Impl{SelfID: botQQ, Nickname: "青蓝", Token: "the-right-one"}
	srv := httptest.NewServer(impl)
	defer srv.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "cyan-test.yaml")
	yaml := "bridges:\n  onebot:\n    - {name: qq, mode: forward, url: " + "ws" + strings.TrimPrefix(srv.URL, "http") +
		", access_token: a-wrong-one, reconnect: 1s}\n" + qqManners
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	d := start(t, data, env(data, url, "CYAN_CONFIG="+cfg))
	r := &qqRig{d: d, impl: impl}
	began := time.Now()
	b := r.waitBridge(t, func(b map[string]any) bool { return b["state"] == "failed: wrong access_token" })
	if !strings.Contains(fmt.Sprint(b["last_error"]), "retcode 1403") {
		t.Errorf("last error %v", b["last_error"])
	}
	time.Sleep(8*time.Second - time.Since(began))
	if n := impl.Dials(); n > 2 {
		t.Errorf("%d connection attempts in the first 8 s with a wrong token, want 2 (at 0 s and 5 s)", n)
	}
	stdout, _, _ := cli(t, d.cliEnv(), "", "bridges")
	if !strings.Contains(stdout, "failed: wrong access_token") {
		t.Errorf("cyan bridges:\n%s", stdout)
	}
	stdout, _, rc := cli(t, d.cliEnv(), "", "doctor")
	if rc == 0 || !strings.Contains(stdout, "wrong access_token") || !strings.Contains(stdout, "bridges.onebot[].access_token") {
		t.Errorf("cyan doctor: %d\n%s", rc, stdout)
	}
}

// TestQQRecallQuoteAndPoke: a recalled group message is absent from the
// next prompt (and stays in the store, marked); a reply reaches the model
// as the quoted line; a poke of the bot gets an answer.
func TestQQRecallQuoteAndPoke(t *testing.T) {
	t.Parallel()
	r := newQQRig(t, "")
	r.fake.SetDefault(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "ok"} })
	secret, err := r.impl.Group(groupQ, onebottest.Sender{UserID: 1, Nickname: "amy", Card: "amy"}, onebottest.Text("my bank pin is 8731"))
	if err != nil {
		t.Fatal(err)
	}
	quoted, _ := r.impl.Group(groupQ, onebottest.Sender{UserID: 2, Nickname: "ben", Card: "ben"}, onebottest.Text("who brings the cake on friday?"))
	r.stored(t, 2)
	if err := r.impl.GroupRecall(groupQ, 1, 1, secret); err != nil {
		t.Fatal(err)
	}
	waitLog(t, r.d, "a message was recalled")
	r.say(t, 3, "cat", onebottest.Reply(fmt.Sprint(quoted)), onebottest.At(fmt.Sprint(botQQ)), onebottest.Text(" I will"))
	r.sends(t, 1)
	req := chatRequests(r.fake)[0]
	prompt := fmt.Sprint(req.Messages)
	if strings.Contains(prompt, "8731") {
		t.Errorf("the recalled message reached the prompt:\n%s", prompt)
	}
	if !strings.Contains(prompt, "[reply to ^ben [") || !strings.Contains(prompt, "]: who brings the cake on friday?]") {
		t.Errorf("the quoted message is not its line in the prompt:\n%s", prompt)
	}
	all := r.d.messages(t, fmt.Sprintf("qq:group:%d", groupQ))
	kept := false
	for _, m := range all {
		if strings.Contains(fmt.Sprint(m["text"]), "8731") {
			kept = m["recalled"] != nil
		}
	}
	if !kept {
		t.Errorf("the recalled message is not kept marked in the store: %v", all)
	}

	if err := r.impl.GroupPoke(groupQ, 2, botQQ); err != nil {
		t.Fatal(err)
	}
	r.sends(t, 2)
	last := chatRequests(r.fake)[1]
	if ctx := last.Messages[len(last.Messages)-1].Content; !strings.Contains(ctx, "[poke: ben poked 青蓝]") {
		t.Errorf("the poke's turn:\n%s", ctx)
	}
}
