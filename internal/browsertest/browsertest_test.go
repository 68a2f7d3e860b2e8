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

// TestSharedTabsAreApart: the tabs of a shared browser run in one browser
// but keep nothing of each other: a cookie and local storage one page sets
// are not in the other's, and each tab has its own console errors.
func TestSharedTabsAreApart(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>t</title><p id="ready">hi</p>
<script>document.title = [document.cookie, localStorage.getItem("k")].join("|");
if (location.search === "?set") { document.cookie = "c=1; path=/"; localStorage.setItem("k", "v"); console.error("first tab"); }</script>`)
	}))
	defer srv.Close()
	s := NewShared()
	t.Cleanup(s.Close) // after the tabs' own cleanups
	first := s.Tab(t)
	if err := first.Run(chromedp.Navigate(srv.URL+"/?set"), chromedp.WaitVisible(chromedp.CSS("#ready")), chromedp.Navigate(srv.URL+"/")); err != nil {
		t.Fatal(err)
	}
	if title, err := chromedp.Run(first.Context(), chromedp.Title()); err != nil || title != "c=1|v" {
		t.Fatalf("the first tab keeps %q %v, want its cookie and storage", title, err)
	}
	second := s.Tab(t)
	if err := second.Run(chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#ready"))); err != nil {
		t.Fatal(err)
	}
	if title, err := chromedp.Run(second.Context(), chromedp.Title()); err != nil || title != "|" {
		t.Fatalf("the second tab sees %q %v, want nothing of the first's", title, err)
	}
	for range 500 {
		if len(first.ConsoleErrors()) > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if errs := first.ConsoleErrors(); len(errs) != 1 || !strings.Contains(errs[0], "first tab") {
		t.Errorf("the first tab's errors: %q", errs)
	}
	if errs := second.ConsoleErrors(); len(errs) != 0 {
		t.Errorf("the second tab's errors: %q", errs)
	}
}
