package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/daemon"
	"github.com/cyan-agent/cyan/internal/llmtest"
)

// happyLine is what the companion says, and the speak script marks happy.
const happyLine = "太好了，今天我真的非常非常开心，我们一起去公园散步吧。"

// vrmPersona writes a persona folder whose replies are cut by the speak
// script (so a segment's emotion comes from the model) and, when model is
// not nil, holds it as avatar.vrm.
func vrmPersona(t *testing.T, model []byte, table string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "persona")
	os.MkdirAll(dir, 0o755)
	md := "---\nname: Vivi\ncolor: \"#C04080\"\nvariables:\n  voice_segments: speak\n---\nI am Vivi, a cheerful companion.\n"
	if err := os.WriteFile(filepath.Join(dir, "persona.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	if table != "" {
		os.WriteFile(filepath.Join(dir, "avatar-expressions.json"), []byte(table), 0o644)
	}
	if model != nil {
		if err := os.WriteFile(filepath.Join(dir, "avatar.vrm"), model, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// startVRMRig is a daemon with persona dir on a fake model that replies
// happyLine and, asked by the speak script, marks it happy.
func startVRMRig(t *testing.T, dir string) *rig {
	t.Helper()
	root := t.TempDir()
	r := &rig{llm: &llmtest.Server{}, dataDir: filepath.Join(root, "data")}
	r.llm.Default = func(req llmtest.Request) llmtest.Reply {
		switch {
		case strings.Contains(string(req.ResponseFormat), "speech"):
			b, _ := json.Marshal(map[string]any{"speech": []map[string]string{{"text": happyLine, "emotion": "happy", "language": "zh"}}})
			return llmtest.Reply{Text: string(b)}
		case len(req.ResponseFormat) > 0:
			return llmtest.Reply{Text: `{}`}
		}
		return llmtest.Reply{Text: happyLine}
	}
	llmSrv := httptest.NewServer(r.llm)
	t.Cleanup(llmSrv.Close)
	cfgFile := filepath.Join(root, "cyan.yaml")
	os.WriteFile(cfgFile, []byte("agent: {compress: {enabled: false}}\npersona: "+dir+"\n"), 0o600)
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"CYAN_DATA_DIR": r.dataDir, "CYAN_CONFIG": cfgFile,
			"CYAN_ADDR": "127.0.0.1:0", "CYAN_LLM_BASE_URL": llmSrv.URL + "/v1", "HOME": root}[k]
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
		_, port, _ := net.SplitHostPort(a.String())
		r.base = "http://127.0.0.1:" + port
	case err := <-done:
		t.Fatalf("daemon stopped: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the daemon did not start")
	}
	return r
}

// newGLBrowser is a tab of the browser with WebGL through SwiftShader.
func newGLBrowser(t *testing.T) *browser {
	t.Helper()
	return tab(t, glChrome)
}

// TestPageVRMAvatar: a persona with avatar.vrm (a VRM 1.0 model made by
// testVRM) shows it on the page: the canvas draws; during a segment the
// speak script marked happy the happy expression rises and it falls after;
// the mouth opens while the audio plays and closes after. Screenshots at
// 1280×800 and 390×844; the page's weight and the time to the first frame
// are logged.
func TestPageVRMAvatar(t *testing.T) {
	t.Parallel()
	requireTool(t, "espeak-ng")
	for _, v := range []string{"1.0", "0.x"} {
		t.Run("VRM "+v, func(t *testing.T) {
			t.Parallel()
			testPageVRM(t, v)
		})
	}
}

func testPageVRM(t *testing.T, version string) {
	b := newGLBrowser(t)
	model := testVRM(version == "0.x")
	shot := func(name string) { shoot(t, b, strings.ReplaceAll("vrm"+version+"-"+name, ".", "")+".png") }
	// The 0.x persona overrides the table: happy is happy and half surprised.
	table := ""
	if version == "0.x" {
		table = `{"happy": {"happy": 1, "surprised": 0.5}}`
	}
	r := startVRMRig(t, vrmPersona(t, model, table))
	b.do(t, chromedp.EmulateViewport(1280, 800))
	b.do(t, chromedp.Navigate(r.base+"/?channel=desktop"))
	b.until(t, "the page is ready", `document.body.dataset.ready === 'true'`)
	b.until(t, "the VRM draws", `window.cyanAvatar?.kind === 'vrm' && window.cyanAvatar.frames > 3`)
	if e := eval[string](t, b, `window.cyanAvatar.error`); e != "" {
		t.Fatalf("avatar error: %s", e)
	}
	// The canvas has drawn pixels of the model (not all one colour).
	colours := eval[int](t, b, `(() => {
		const c = document.querySelector('#avatar canvas');
		const g = c.getContext('webgl2') || c.getContext('webgl');
		const px = new Uint8Array(c.width * c.height * 4);
		g.readPixels(0, 0, c.width, c.height, g.RGBA, g.UNSIGNED_BYTE, px);
		const seen = new Set();
		for (let i = 0; i < px.length; i += 4 * 97) if (px[i + 3] > 0) seen.add(px[i] >> 4 << 8 | px[i + 1] >> 4 << 4 | px[i + 2] >> 4);
		return seen.size;
	})()`)
	if colours < 3 {
		t.Errorf("the canvas shows %d colours: the model is not drawn", colours)
	}
	if w := eval[map[string]float64](t, b, `window.cyanAvatar.weights()`); w["happy"] > 0.01 || w["aa"] > 0.01 {
		t.Errorf("before speaking: %v", w)
	}
	weight := eval[float64](t, b, `performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource')).reduce((s, e) => s + e.transferSize, 0)`)
	first := eval[float64](t, b, `window.cyanAvatar.firstFrameAt`)
	mount := eval[float64](t, b, `window.cyanAvatar.firstFrameMs`)
	t.Logf("VRM %s: page weight with the model: %.0f bytes (model %d bytes); first frame %.0f ms after navigation, %.0f ms after the model was asked for", version, weight, len(model), first, mount)
	shot("1280x800")

	// Alive when quiet: its head turns toward the pointer (right and down
	// of the page), and it blinks (asked once the segment below is over:
	// the first blink comes 2–5 s after the first frame, time this test
	// need not spend drawing only to wait for it).
	b.do(t, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, 1270, 790))
	b.until(t, "the head turns toward the pointer", `(l => l.yaw > 0.15 && l.pitch > 0.08)(window.cyanAvatar.look())`)
	shot("looking")
	b.do(t, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, 640, 400))

	b.do(t, chromedp.SendKeys(chromedp.CSS("#text"), "今天去公园吗"), chromedp.Click(chromedp.CSS("#send")))
	b.until(t, "the happy segment plays", fmt.Sprintf(`(window.cyanPlayed || []).some(p => p.text === %q && p.emotion === 'happy' && !p.ended)`, happyLine))
	b.until(t, "the happy expression rises", `window.cyanAvatar.weights().happy > 0.6`)
	if version == "0.x" {
		b.until(t, "the persona's table adds surprise", `window.cyanAvatar.weights().surprised > 0.3`)
	}
	b.until(t, "the mouth opens", `(w => Math.max(w.aa, w.ih, w.ou, w.ee, w.oh))(window.cyanAvatar.weights()) > 0.2`)
	shot("speaking")
	b.until(t, "the segment ends", `(window.cyanPlayed || []).some(p => p.emotion === 'happy' && p.ended)`)
	b.until(t, "the happy expression falls", `window.cyanAvatar.weights().happy < 0.05 && window.cyanAvatar.weights().surprised < 0.05`)
	b.until(t, "the mouth closes", `(w => Math.max(w.aa, w.ih, w.ou, w.ee, w.oh))(window.cyanAvatar.weights()) < 0.02`)
	b.until(t, "it blinks", `window.cyanAvatar.blinks >= 1`)

	b.do(t, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(1)))
	b.until(t, "the phone layout draws", `(c => c && c.width > 50 && c.height > 50 && c.getBoundingClientRect().height <= window.innerHeight / 3 + 1)(document.querySelector('#avatar canvas'))`)
	shot("390x844")

	if errs := b.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
	for _, u := range b.urls() {
		if !strings.HasPrefix(u, r.base+"/") && !strings.HasPrefix(u, "data:") && !strings.HasPrefix(u, "blob:") {
			t.Errorf("the page requested %s, outside the daemon", u)
		}
	}
}

// TestPageVRMFallsBack: a VRM that is not a model says why on the page
// and leaves the drawn face.
func TestPageVRMFallsBack(t *testing.T) {
	t.Parallel()
	b := newGLBrowser(t)
	r := startVRMRig(t, vrmPersona(t, []byte("glTF but not really"), ""))
	b.do(t, chromedp.EmulateViewport(1280, 800))
	b.do(t, chromedp.Navigate(r.base+"/?channel=desktop"))
	b.until(t, "the page says the model did not load", `/avatar.vrm did not load/.test(document.getElementById('avatar-note')?.textContent || '')`)
	if !eval[bool](t, b, `!!document.querySelector('#avatar svg') && !document.querySelector('#avatar canvas') && window.cyanAvatar.kind === 'face'`) {
		t.Error("the drawn face is not back")
	}
}

// TestPageVRMWithoutWebGL: in a browser without WebGL the page says so and
// keeps the drawn face; three.js is not even fetched.
func TestPageVRMWithoutWebGL(t *testing.T) {
	t.Parallel()
	b := tab(t, chrome) // the browser without WebGL
	r := startVRMRig(t, vrmPersona(t, testVRM(false), ""))
	b.do(t, chromedp.EmulateViewport(1280, 800))
	b.do(t, chromedp.Navigate(r.base+"/?channel=desktop"))
	b.until(t, "the page says there is no WebGL", `/no WebGL/.test(document.getElementById('avatar-note')?.textContent || '')`)
	if !eval[bool](t, b, `!!document.querySelector('#avatar svg') && !document.querySelector('#avatar canvas')`) {
		t.Error("the drawn face is not there")
	}
	for _, u := range b.urls() {
		if strings.Contains(u, "/vendor/") || strings.HasSuffix(u, ".vrm") {
			t.Errorf("without WebGL the page fetched %s", u)
		}
	}
}
