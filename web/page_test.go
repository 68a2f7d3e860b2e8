package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/daemon"
	"github.com/cyan-agent/cyan/internal/llmtest"
)

// requireTool skips when a program is missing, unless CYAN_REQUIRE_TOOLS=1
// (CI), where it fails.
func requireTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CYAN_REQUIRE_TOOLS") == "1" {
			t.Fatalf("%s is required (CYAN_REQUIRE_TOOLS=1) but not installed: apt-get install %s", name, name)
		}
		t.Skipf("%s is not installed (apt-get install %s)", name, name)
	}
	return p
}

// rig is a daemon on a fake LLM, with the real espeak-ng voice.
type rig struct {
	base string
	llm  *llmtest.Server
	mu   sync.Mutex
	// chat are the companion's answers, in order.
	chat []llmtest.Reply
	// speak is what the speech observer decides, in order.
	speak []string
}

const mixedReply = "你好，今天天气很好。こんにちは、元気ですか？I am fine, thank you very much."

func startRig(t *testing.T) *rig {
	t.Helper()
	r := &rig{llm: &llmtest.Server{}}
	r.llm.Default = func(req llmtest.Request) llmtest.Reply {
		r.mu.Lock()
		defer r.mu.Unlock()
		switch {
		case strings.Contains(req.System, "sense of timing"):
			note := "nothing"
			if len(r.speak) > 0 {
				note, r.speak = r.speak[0], r.speak[1:]
			}
			b, _ := json.Marshal(map[string]any{"speak": note != "nothing", "note": note})
			return llmtest.Reply{Text: string(b)}
		case len(req.ResponseFormat) > 0:
			return llmtest.Reply{Text: `{}`}
		case len(r.chat) > 0:
			rep := r.chat[0]
			r.chat = r.chat[1:]
			return rep
		}
		return llmtest.Reply{Text: "嗯。"}
	}
	llmSrv := httptest.NewServer(r.llm)
	t.Cleanup(llmSrv.Close)

	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "cyan.yaml")
	os.WriteFile(cfgFile, []byte("observers:\n  speech: {every: 24h, channels: [desktop]}\nagent: {compress: {enabled: false}}\n"), 0o600)
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"CYAN_DATA_DIR": filepath.Join(dir, "data"), "CYAN_CONFIG": cfgFile,
			"CYAN_ADDR": "127.0.0.1:0", "CYAN_LLM_BASE_URL": llmSrv.URL + "/v1", "HOME": dir}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	ready := make(chan net.Addr, 1)
	d, err := daemon.New(daemon.Options{Config: cfg, Ready: func(a net.Addr) { ready <- a }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("daemon: %v", err)
		}
	})
	select {
	case a := <-ready:
		r.base = "http://" + a.String()
	case err := <-done:
		t.Fatalf("daemon stopped: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the daemon did not start")
	}
	return r
}

func (r *rig) say(replies ...llmtest.Reply) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.chat = append(r.chat, replies...)
}

// proactive makes main-observer's speech decide to speak, and the
// companion say text.
func (r *rig) proactive(t *testing.T, text string) {
	t.Helper()
	r.mu.Lock()
	r.speak = append(r.speak, "say hello again")
	r.chat = append(r.chat, llmtest.Reply{Text: text})
	r.mu.Unlock()
	resp, err := http.Post(r.base+"/api/v1/observers/main-observer%2Fspeech/run", "application/json", bytes.NewReader([]byte("{}")))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("run the speech observer: %s", resp.Status)
	}
}

// browser is a headless Chromium that records console errors, exceptions
// and every URL the page requests.
type browser struct {
	ctx      context.Context
	mu       sync.Mutex
	errors   []string
	requests []string
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	bin := requireTool(t, "chromium")
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("autoplay-policy", "no-user-gesture-required"),
		chromedp.WindowSize(1100, 760),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	b := &browser{}
	ctx, cancelC := chromedp.NewContext(actx, chromedp.WithListener(b.listen))
	t.Cleanup(func() { cancelC(); cancelA() })
	b.ctx = ctx
	if err := chromedp.Do(ctx); err != nil {
		t.Fatal(err)
	}
	return b
}

func (b *browser) listen(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if e.Type == "error" || e.Type == "assert" {
			var parts []string
			for _, a := range e.Args {
				parts = append(parts, string(a.Value)+a.Description)
			}
			b.errors = append(b.errors, "console.error: "+strings.Join(parts, " "))
		}
	case *runtime.EventExceptionThrown:
		d := e.ExceptionDetails
		msg := d.Text
		if d.Exception != nil {
			msg += " " + d.Exception.Description
		}
		b.errors = append(b.errors, fmt.Sprintf("exception: %s (%s:%d)", msg, d.URL, d.LineNumber))
	case *log.EventEntryAdded:
		if e.Entry.Level == "error" {
			b.errors = append(b.errors, "log: "+e.Entry.Text+" "+e.Entry.URL)
		}
	case *network.EventRequestWillBeSent:
		b.requests = append(b.requests, e.Request.URL)
	}
}

func (b *browser) do(t *testing.T, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

// until evaluates a JavaScript condition until it holds.
func (b *browser) until(t *testing.T, what, js string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		state, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`JSON.stringify({log: [...document.querySelectorAll('#log li')].map(li => li.className + ': ' + li.textContent), played: window.cyanPlayed, events: window.cyanEvents, note: document.getElementById('voice-note')?.textContent, notice: document.getElementById('notice')?.textContent})`))
		t.Fatalf("%s: %v\npage: %s", what, err, state)
	}
}

func eval[T any](t *testing.T, b *browser, js string) T {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

type played struct {
	Seq      int     `json:"seq"`
	Turn     string  `json:"turn"`
	Text     string  `json:"text"`
	Emotion  string  `json:"emotion"`
	Language string  `json:"language"`
	Bytes    int     `json:"bytes"`
	Duration float64 `json:"duration"`
	Peak     float64 `json:"peak"`
}

func TestPageTalksAndSpeaks(t *testing.T) {
	requireTool(t, "espeak-ng")
	b := newBrowser(t)
	r := startRig(t)
	r.say(llmtest.Reply{Text: mixedReply, ChunkSize: 3, ChunkDelay: 20 * time.Millisecond})

	b.do(t, chromedp.Navigate(r.base+"/?channel=desktop"))
	b.until(t, "the page is ready", `document.body.dataset.ready === 'true'`)
	color := eval[string](t, b, `getComputedStyle(document.documentElement).getPropertyValue('--accent').trim()`)
	if !strings.EqualFold(color, "#1D75B3") {
		t.Errorf("the avatar's colour is %q, want 青蓝's #1D75B3", color)
	}

	// A message: the reply streams in, is spoken segment by segment, and
	// the subtitle follows.
	b.do(t, chromedp.SendKeys(chromedp.CSS("#text"), "你好呀"), chromedp.Click(chromedp.CSS("#send")))
	b.until(t, "the reply is shown", fmt.Sprintf(`[...document.querySelectorAll('#log li.assistant')].some(li => li.textContent === %q && li.dataset.id)`, mixedReply))
	b.until(t, "the reply's stream ends", `window.cyanEvents.at(-1) === 'done'`)
	events := eval[[]string](t, b, `window.cyanEvents`)
	deltas := 0
	for _, e := range events {
		if e == "delta" {
			deltas++
		}
	}
	if deltas < 5 || events[len(events)-1] != "done" {
		t.Errorf("the reply should stream in deltas: %v", events)
	}
	b.until(t, "three segments are played", `(window.cyanPlayed || []).filter(p => p.ended).length >= 3`)
	got := eval[[]played](t, b, `window.cyanPlayed`)
	wantLangs := []string{"zh", "ja", "en"}
	for i, p := range got[:3] {
		if p.Language != wantLangs[i] || p.Bytes < 1000 || p.Duration < 0.2 || p.Peak <= 0.001 {
			t.Errorf("played %d: %+v", i, p)
		}
		if i > 0 && p.Seq <= got[i-1].Seq {
			t.Errorf("played out of order: %+v", got)
		}
	}
	if got[1].Emotion != "ask" {
		t.Errorf("the question's emotion is %q", got[1].Emotion)
	}
	subtitle := eval[string](t, b, `document.getElementById('subtitle').textContent`)
	if subtitle != "I am fine, thank you very much." {
		t.Errorf("subtitle %q", subtitle)
	}

	// A proactive message appears and speaks.
	r.proactive(t, "我来啦！")
	b.until(t, "the proactive message appears", `[...document.querySelectorAll('#log li.assistant.proactive')].some(li => li.textContent === '我来啦！')`)
	b.until(t, "the proactive message is spoken", `(window.cyanPlayed || []).some(p => p.text === '我来啦！' && p.ended)`)

	shot, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.ArtifactDir(), "page.png")
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)

	// Reload while a reply is streaming: the history shows, and the reply
	// that was on its way arrives; nothing is missed or shown twice.
	long := "我在想，" + strings.Repeat("慢慢说。", 20)
	r.say(llmtest.Reply{Text: long, ChunkSize: 2, ChunkDelay: 25 * time.Millisecond})
	b.do(t, chromedp.SendKeys(chromedp.CSS("#text"), "慢慢说吧"), chromedp.Click(chromedp.CSS("#send")))
	b.until(t, "the slow reply starts", `document.querySelector('#log li.streaming')?.textContent.length > 4`)
	b.do(t, chromedp.Reload())
	b.until(t, "the page is ready again", `document.body.dataset.ready === 'true'`)
	b.until(t, "the slow reply arrives after the reload", fmt.Sprintf(`[...document.querySelectorAll('#log li.assistant')].some(li => li.textContent === %q)`, long))
	texts := eval[[]string](t, b, `[...document.querySelectorAll('#log li')].map(li => li.className.split(' ')[0] + ': ' + li.textContent)`)
	want := []string{"user: 你好呀", "assistant: " + mixedReply, "assistant: 我来啦！", "user: 慢慢说吧", "assistant: " + long}
	if strings.Join(texts, "\n") != strings.Join(want, "\n") {
		t.Errorf("after the reload the page shows\n%s\nwant\n%s", strings.Join(texts, "\n"), strings.Join(want, "\n"))
	}

	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.errors) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(b.errors, "\n"))
	}
	for _, u := range b.requests {
		if !strings.HasPrefix(u, r.base+"/") && !strings.HasPrefix(u, "data:") {
			t.Errorf("the page requested %s, outside the daemon", u)
		}
	}
}
