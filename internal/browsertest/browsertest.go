// Package browsertest starts a real headless Chromium (Debian's chromium
// package) through chromedp, for tests that load pages as a person's
// browser would: the desktop page, or a hostile page that attacks the API.
//
//	b := browsertest.Start(t)             // skips without chromium, unless CYAN_REQUIRE_TOOLS=1
//	err := b.Run(chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("#ready")))
//	title, err := chromedp.Run(b.Context(), chromedp.Title())
//	if errs := b.ConsoleErrors(); len(errs) > 0 { … }
//
// A package whose tests each need a browser shares one (Shared), each test
// in a tab of a fresh browser context:
//
//	var chrome = browsertest.NewShared()   // closed by TestMain
//	b := chrome.Tab(t)                      // as Start, in a browser started once
//
// Every browser has a fresh profile (a user-data-dir under t.TempDir(), or
// for a shared one a temporary directory Close removes),
// plays sound without a gesture (autoplay-policy=no-user-gesture-required),
// and runs with --headless --no-sandbox --disable-gpu --disable-quic
// --no-first-run --disable-background-networking --disable-component-update
// --disable-sync, so it reaches nothing but what the test serves. It is
// closed when the test ends.
//
// It imports nothing of cyan's.
package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Timeout bounds one Run.
const Timeout = 60 * time.Second

// Browser is one headless Chromium with one tab.
type Browser struct {
	ctx context.Context

	mu     sync.Mutex
	errors []string
}

// Binary finds Chromium: "chromium" (Debian), else "chromium-browser".
func Binary() (string, error) {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("chromium is not installed (apt-get install chromium)")
}

// Start starts the browser and opens its tab. Without Chromium the test is
// skipped — or fails, when CYAN_REQUIRE_TOOLS=1 (CI never skips silently).
//
// more are more allocator options (flags), applied after cyan's own: a
// test of WebGL turns SwiftShader on with them.
func Start(t testing.TB, more ...chromedp.ExecAllocatorOption) *Browser {
	t.Helper()
	bin := binary(t)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), options(bin, t.TempDir(), more)...)
	ctx, cancel := chromedp.NewContext(actx)
	// The first call starts the browser and its tab, with the tab's own
	// context: one with a deadline would close them when it ends.
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		cancelAlloc()
		t.Fatalf("start %s: %v", bin, err)
	}
	return watch(t, ctx, func() { cancel(); cancelAlloc() })
}

// binary is Binary, or the test skipped (failed with CYAN_REQUIRE_TOOLS=1).
func binary(t testing.TB) string {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		if os.Getenv("CYAN_REQUIRE_TOOLS") == "1" {
			t.Fatalf("%v, and CYAN_REQUIRE_TOOLS=1", err)
		}
		t.Skip(err)
	}
	return bin
}

// options are the allocator options of a browser with its profile in dir.
func options(bin, dir string, more []chromedp.ExecAllocatorOption) []chromedp.ExecAllocatorOption {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.UserDataDir(dir),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("autoplay-policy", "no-user-gesture-required"),
	}
	return append(opts, more...)
}

// watch makes the Browser of the tab ctx: it collects the tab's console
// errors until the test ends, and then runs stop (which ends ctx).
func watch(t testing.TB, ctx context.Context, stop func()) *Browser {
	b := &Browser{ctx: ctx}
	messages := chromedp.Console(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				b.mu.Lock()
				b.errors = append(b.errors, m.String())
				b.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		stop()
		<-done
	})
	return b
}

// Shared is one Chromium that the tests of a package share: it starts on
// the first Tab, and each Tab is a tab of its own in a browser context of
// its own (an incognito profile: no cookie, storage or cache of another
// test), so tests stay apart while the package pays for one browser.
// TestMain closes it after m.Run.
//
//	var chrome = browsertest.NewShared()
//	func TestMain(m *testing.M) { code := m.Run(); chrome.Close(); os.Exit(code) }
//	b := chrome.Tab(t)
type Shared struct {
	more []chromedp.ExecAllocatorOption

	once sync.Once
	ctx  context.Context // the browser's first tab
	stop func()
	dir  string
	bin  string
	err  error
}

// NewShared is a shared browser with the allocator options more, applied
// after cyan's own (as Start's). It starts nothing yet.
func NewShared(more ...chromedp.ExecAllocatorOption) *Shared {
	return &Shared{more: more}
}

// Tab opens a tab in a fresh browser context of the shared browser,
// starting the browser the first time; the tab and its context are closed
// when the test ends. Without Chromium the test is skipped, or fails with
// CYAN_REQUIRE_TOOLS=1, as with Start.
func (s *Shared) Tab(t testing.TB) *Browser {
	t.Helper()
	bin := binary(t)
	s.once.Do(func() {
		s.bin = bin
		s.dir, s.err = os.MkdirTemp("", "browsertest-")
		if s.err != nil {
			return
		}
		actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), options(bin, s.dir, s.more)...)
		ctx, cancel := chromedp.NewContext(actx)
		s.ctx, s.stop = ctx, func() { cancel(); cancelAlloc() }
		// Started with its own context, as in Start.
		s.err = chromedp.Do(ctx)
	})
	if s.err != nil {
		t.Fatalf("start %s: %v", s.bin, s.err)
	}
	if s.ctx == nil {
		t.Fatal("browsertest: Tab after the shared browser was closed")
	}
	ctx, cancel := chromedp.NewContext(s.ctx, chromedp.WithNewBrowserContext())
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		t.Fatalf("open a tab in %s: %v", s.bin, err)
	}
	return watch(t, ctx, cancel)
}

// Close stops the browser, if it started, and removes its profile.
func (s *Shared) Close() {
	s.once.Do(func() {}) // a Tab after Close starts nothing
	if s.stop != nil {
		s.stop()
	}
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}

// Run runs chromedp actions in the tab, within Timeout.
func (b *Browser) Run(actions ...chromedp.Action[chromedp.Void]) error {
	ctx, cancel := context.WithTimeout(b.ctx, Timeout)
	defer cancel()
	return chromedp.Do(ctx, actions...)
}

// Context is the tab's chromedp context, for what Run does not cover
// (chromedp.Run of an action with a value, chromedp.Events).
func (b *Browser) Context() context.Context { return b.ctx }

// ConsoleErrors returns what the pages reported as errors so far: console
// errors, uncaught exceptions, and the browser's error log (a failed load).
func (b *Browser) ConsoleErrors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.errors...)
}
