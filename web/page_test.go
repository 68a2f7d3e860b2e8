package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
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

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/daemon"
	"github.com/cyan-agent/cyan/internal/browsertest"
	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/internal/testexit"
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
	base    string // the daemon as the browser reaches it, on 127.0.0.1
	dataDir string
	token   string // the API token, off loopback
	llm     *llmtest.Server
	mu      sync.Mutex
	// chat are the companion's answers, in order.
	chat []llmtest.Reply
	// speak is what the speech observer decides, in order.
	speak []string
	// stop stops the daemon (once; the test's end does it too).
	stop func()
}

const mixedReply = "你好，今天天气很好。こんにちは、元気ですか？I am fine, thank you very much."

// startRig starts the daemon on addr: 127.0.0.1:0 (no token), or
// 0.0.0.0:0, where every route but the page's own needs the token.
func startRig(t *testing.T, addr string) *rig {
	t.Helper()
	return startRigWith(t, addr, "")
}

// startRigWith is startRig with more configuration (YAML lines).
func startRigWith(t *testing.T, addr, extra string) *rig {
	t.Helper()
	return startRigIn(t, t.TempDir(), addr, extra)
}

// startRigIn is startRigWith on the data folder and config file in dir:
// a daemon stopped (rig.stop) and started again there finds what the
// first one stored.
func startRigIn(t *testing.T, dir, addr, extra string) *rig {
	t.Helper()
	r := &rig{llm: &llmtest.Server{}, dataDir: filepath.Join(dir, "data")}
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

	cfgFile := filepath.Join(dir, "cyan.yaml")
	os.WriteFile(cfgFile, []byte("observers:\n  speech: {every: 24h, channels: [desktop]}\nagent: {compress: {enabled: false}}\n"+extra), 0o600)
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"CYAN_DATA_DIR": r.dataDir, "CYAN_CONFIG": cfgFile,
			"CYAN_ADDR": addr, "CYAN_LLM_BASE_URL": llmSrv.URL + "/v1", "HOME": dir}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.LLM.OpensThink == "auto" {
		// The fake model writes no reasoning: the rig knows it, as a
		// daemon does after the model's first answer, so that the first
		// reply streams too.
		cfg.LLM.OpensThink = "no"
	}
	ready := make(chan net.Addr, 1)
	d, err := daemon.New(daemon.Options{Config: cfg, Ready: func(a net.Addr) { ready <- a }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	var once sync.Once
	r.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("daemon: %v", err)
			}
		})
	}
	t.Cleanup(r.stop)
	select {
	case a := <-ready:
		_, port, _ := net.SplitHostPort(a.String())
		r.base = "http://127.0.0.1:" + port
		r.token = daemon.ReadToken(r.dataDir)
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
	req, _ := http.NewRequest("POST", r.base+"/api/v1/observers/main-observer%2Fspeech/run", bytes.NewReader([]byte("{}")))
	req.Header.Set("Content-Type", "application/json")
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("run the speech observer: %s", resp.Status)
	}
}

// The package's two browsers (browsertest.Shared), each started once for
// all its tests, every test in a tab of a fresh browser context: one without
// WebGL (the page asks for WebGL only for a persona's avatar.vrm, so it is
// the browser of every test but the VRM's, and of the one that proves the
// page without WebGL), and one with WebGL through SwiftShader (software).
var (
	chrome   = browsertest.NewShared(chromedp.Flag("disable-3d-apis", true))
	glChrome = browsertest.NewShared(
		chromedp.Flag("disable-gpu", false),
		chromedp.Flag("use-gl", "angle"),
		chromedp.Flag("use-angle", "swiftshader"),
		chromedp.Flag("enable-unsafe-swiftshader", true),
		chromedp.Flag("ignore-gpu-blocklist", true),
	)
)

// TestMain runs four page tests at a time unless -test.parallel says
// otherwise: most of a page test is the page waiting (on speech playing
// in real time, a reconnect, a stream), not CPU, and at the default of
// GOMAXPROCS (two here) the package took twice as long.
func TestMain(m *testing.M) {
	flag.Parse()
	parallelSet := false
	flag.Visit(func(f *flag.Flag) { parallelSet = parallelSet || f.Name == "test.parallel" })
	if !parallelSet {
		flag.Set("test.parallel", "4")
	}
	code := m.Run()
	chrome.Close()
	glChrome.Close()
	testexit.Exit(code)
}

// browser is a tab of a headless Chromium (internal/browsertest) that also
// records every URL the page requests.
type browser struct {
	*browsertest.Browser
	mu       sync.Mutex
	requests []string
}

// newBrowser is a tab of the browser without WebGL, 1100×760.
func newBrowser(t *testing.T) *browser {
	t.Helper()
	b := tab(t, chrome)
	b.do(t, chromedp.EmulateViewport(1100, 760))
	return b
}

// tab is a tab of the shared browser s, recording the page's requests.
func tab(t *testing.T, s *browsertest.Shared) *browser {
	t.Helper()
	b := &browser{Browser: s.Tab(t)}
	err := chromedp.Listen(b.Context(), func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			b.mu.Lock()
			b.requests = append(b.requests, e.Request.URL)
			b.mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(b.Context(), page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: fasterVoice}); err != nil {
		t.Fatal(err)
	}
	return b
}

// fasterVoice plays every Web Audio source of the page three times as fast:
// a test seam the tab adds to each page it loads, the page's own code
// unchanged. The tests wait for segments to be played to their end, and a
// voice's seconds are the seconds the browser spends rendering the page
// (the face's mouth, SwiftShader's VRM each frame); what the page does with
// a segment (its order, its analyser, an interruption, its end, the
// buffer's duration it records) is the same at any rate. A test that needs
// a segment to last sets window.voiceRate (1: as recorded) until the page
// is loaded again.
const fasterVoice = `(() => {
  const start = AudioBufferSourceNode.prototype.start;
  AudioBufferSourceNode.prototype.start = function (...args) {
    this.playbackRate.value = window.voiceRate || 3;
    return start.apply(this, args);
  };
})();`

// urls returns the URLs the page requested so far.
func (b *browser) urls() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.requests...)
}

func (b *browser) do(t *testing.T, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := b.Run(actions...); err != nil {
		t.Fatal(err)
	}
}

// until evaluates a JavaScript condition until it holds.
func (b *browser) until(t *testing.T, what, js string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.Context(), browsertest.Timeout)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		state, _ := chromedp.Run(b.Context(), chromedp.Evaluate[string](`JSON.stringify({log: [...document.querySelectorAll('#log li')].map(li => li.className + ': ' + li.textContent), played: window.cyanPlayed, events: window.cyanEvents, note: document.getElementById('voice-note')?.textContent, notice: document.getElementById('notice')?.textContent, login: document.getElementById('login')?.open, loginError: document.getElementById('login-error')?.textContent})`))
		t.Fatalf("%s: %v\npage: %s\nconsole: %q", what, err, state, b.ConsoleErrors())
	}
}

func eval[T any](t *testing.T, b *browser, js string) T {
	t.Helper()
	v, err := chromedp.Run(b.Context(), chromedp.Evaluate[T](js))
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
	t.Parallel()
	requireTool(t, "espeak-ng")
	b := newBrowser(t)
	r := startRig(t, "127.0.0.1:0")
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

	shot, err := chromedp.Run(b.Context(), chromedp.FullScreenshot(100))
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

	if errs := b.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
	for _, u := range b.urls() {
		if !strings.HasPrefix(u, r.base+"/") && !strings.HasPrefix(u, "data:") {
			t.Errorf("the page requested %s, outside the daemon", u)
		}
	}
}

// TestPageAsksForTheTokenOffLoopback: on an address beyond loopback the page
// loads without the token, asks for it once, trades it for the session
// cookie and talks, listens and speaks with the cookie alone; a reload does
// not ask again, and the token is never in a URL or in the page's storage.
func TestPageAsksForTheTokenOffLoopback(t *testing.T) {
	t.Parallel()
	requireTool(t, "espeak-ng")
	b := newBrowser(t)
	r := startRig(t, "0.0.0.0:0")
	if len(r.token) < 16 {
		t.Fatalf("the daemon on 0.0.0.0 made no token (%q)", r.token)
	}
	// Without the token: the page is open, the API is not.
	for path, want := range map[string]int{"/": 200, "/app/main.js": 200, "/api/v1/messages?channel=desktop": 401, "/api/v1/persona": 401} {
		resp, err := http.Get(r.base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("GET %s without the token: %s; want %d", path, resp.Status, want)
		}
	}

	b.do(t, chromedp.Navigate(r.base+"/?channel=desktop"))
	b.until(t, "the page asks for the token", `document.getElementById('login').open === true`)
	if eval[bool](t, b, `document.body.dataset.ready === 'true'`) {
		t.Fatal("the page is ready before it has a session")
	}
	// A wrong token is refused and the page keeps asking.
	b.do(t, chromedp.SendKeys(chromedp.CSS("#token"), "not-the-token"), chromedp.Click(chromedp.CSS("#login-form button[type=submit]")))
	b.until(t, "a wrong token is refused", `document.getElementById('login-error').textContent.includes('refused') && document.getElementById('login').open`)
	// The right one opens the page.
	eval[bool](t, b, `(document.getElementById('token').value = '') === ''`)
	b.do(t, chromedp.SendKeys(chromedp.CSS("#token"), r.token), chromedp.Click(chromedp.CSS("#login-form button[type=submit]")))
	b.until(t, "the page is ready after signing in", `document.body.dataset.ready === 'true' && !document.getElementById('login').open`)

	cookies, err := chromedp.Call(b.Context(), network.GetCookies, network.GetCookiesParams{URLs: []string{r.base + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	var session *network.Cookie
	for _, c := range cookies.Cookies {
		if c.Name == "cyan_session" {
			session = c
		}
	}
	if session == nil || !session.HTTPOnly || session.SameSite != network.CookieSameSiteStrict || session.Value == r.token || session.Path != "/" {
		t.Fatalf("the session cookie: %+v", session)
	}

	// It talks: the reply streams in and is spoken (its audio fetched with
	// the cookie); what the companion says on its own arrives on the stream.
	const hello = "我在呢。Here I am."
	r.say(llmtest.Reply{Text: hello, ChunkSize: 3, ChunkDelay: 10 * time.Millisecond})
	b.do(t, chromedp.SendKeys(chromedp.CSS("#text"), "在吗"), chromedp.Click(chromedp.CSS("#send")))
	b.until(t, "the reply is shown", fmt.Sprintf(`[...document.querySelectorAll('#log li.assistant')].some(li => li.textContent === %q && li.dataset.id)`, hello))
	b.until(t, "the reply is spoken", `(window.cyanPlayed || []).filter(p => p.ended && p.bytes > 1000).length >= 2`)
	r.proactive(t, "还有我！")
	b.until(t, "the proactive message appears and speaks", `(window.cyanPlayed || []).some(p => p.text === '还有我！' && p.ended)`)

	// A reload keeps the session: no question, the history is there.
	b.do(t, chromedp.Reload())
	b.until(t, "the page is ready again", `document.body.dataset.ready === 'true'`)
	if eval[bool](t, b, `document.getElementById('login').open`) {
		t.Error("the page asked for the token again after a reload")
	}
	b.until(t, "the history is shown", fmt.Sprintf(`[...document.querySelectorAll('#log li')].map(li => li.textContent).join('|') === %q`, "在吗|"+hello+"|还有我！"))

	// The token is in no URL, and the page keeps it nowhere.
	urls := b.urls()
	if len(urls) < 10 {
		t.Fatalf("only %d requests were seen: %q", len(urls), urls)
	}
	for _, u := range urls {
		if strings.Contains(u, r.token) {
			t.Errorf("the token is in a URL: %s", u)
		}
		if !strings.HasPrefix(u, r.base+"/") && !strings.HasPrefix(u, "data:") {
			t.Errorf("the page requested %s, outside the daemon", u)
		}
	}
	kept := eval[string](t, b, `location.href + JSON.stringify(localStorage) + JSON.stringify(sessionStorage) + document.cookie + document.documentElement.outerHTML`)
	if strings.Contains(kept, r.token) {
		t.Error("the page keeps the token (in its URL, storage, readable cookies or DOM)")
	}
	// The one error is the wrong token's 401.
	var other []string
	refused := 0
	for _, e := range b.ConsoleErrors() {
		if strings.Contains(e, "401") {
			refused++
		} else {
			other = append(other, e)
		}
	}
	if refused != 1 || len(other) > 0 {
		t.Errorf("console errors: %d refusals (want the wrong token's one), others:\n%s", refused, strings.Join(other, "\n"))
	}
}
