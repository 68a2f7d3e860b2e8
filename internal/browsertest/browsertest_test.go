package browsertest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

func TestBrowserLoadsAPageAndCollectsErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>t</title><p id="ready">hi</p>
<script>document.title = "ready:" + navigator.userAgent.includes("Headless"); console.error("broken " + 42); throw new Error("boom");</script>`)
	}))
	defer srv.Close()
	b := Start(t)
	if err := b.Run(chromedp.Navigate(srv.URL), chromedp.WaitVisible(chromedp.CSS("#ready"))); err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(b.Context(), chromedp.Title())
	if err != nil || title != "ready:true" {
		t.Fatalf("title %q %v", title, err)
	}
	// The console stream is read on its own goroutine: wait for both.
	var errs []string
	for range 500 {
		if errs = b.ConsoleErrors(); len(errs) >= 2 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	joined := strings.Join(errs, "\n")
	if !strings.Contains(joined, "broken 42") || !strings.Contains(joined, "boom") {
		t.Fatalf("console errors: %q", errs)
	}
}
