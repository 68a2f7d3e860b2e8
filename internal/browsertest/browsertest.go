// Package browsertest starts a real headless Chromium (Debian's chromium
// package) through chromedp, for tests that load pages as a person's
// browser would: the desktop page, or a hostile page that attacks the API.
//
//	b := browsertest.Start(t)             // skips without chromium, unless CYAN_REQUIRE_TOOLS=1
//	err := b.Run(chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("#ready")))
//	title, err := chromedp.Run(b.Context(), chromedp.Title())
//	if errs := b.ConsoleErrors(); len(errs) > 0 { … }
//
// Every browser has a fresh profile (a user-data-dir under t.TempDir()),
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
	bin, err := Binary()
	if err != nil {
		if os.Getenv("CYAN_REQUIRE_TOOLS") == "1" {
			t.Fatalf("%v, and CYAN_REQUIRE_TOOLS=1", err)
		}
		t.Skip(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.UserDataDir(t.TempDir()),
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
	opts = append(opts, more...)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	b := &Browser{ctx: ctx}
	// The first call starts the browser and its tab, with the tab's own
	// context: one with a deadline would close them when it ends.
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		cancelAlloc()
		t.Fatalf("start %s: %v", bin, err)
	}
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
		cancel()
		cancelAlloc()
		<-done
	})
	return b
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
