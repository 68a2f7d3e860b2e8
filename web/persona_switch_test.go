package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cyan-agent/cyan/internal/browsertest"
	"github.com/cyan-agent/cyan/internal/llmtest"
)

// TestPageANewCharacterANewConversation: the owner talks with the built-in
// 青蓝 on the page's channel, imports SillyTavern's Seraphina card and
// switches to it (persona: in the config, a restart): the page opens on
// Seraphina's own conversation, desktop:Seraphina, with her greeting shown
// and voiced and none of 青蓝's messages; switching back (no persona:, a
// restart) shows the old conversation again, and Seraphina's is still
// there to return to.
func TestPageANewCharacterANewConversation(t *testing.T) {
	t.Parallel()
	requireTool(t, "espeak-ng")
	b := newBrowser(t)
	home := t.TempDir()
	sera := filepath.Join(home, "Seraphina")
	if err := os.Rename(importCard(t, "st-seraphina.png"), sera); err != nil {
		t.Fatal(err)
	}

	// 青蓝, on desktop.
	r := startRigIn(t, home, "127.0.0.1:0", "")
	r.say(llmtest.Reply{Text: "我在呢，今天想聊什么？"})
	b.do(t, chromedp.Navigate(r.base+"/"))
	b.until(t, "the page is ready", `document.body.dataset.ready === 'true'`)
	if ch := eval[string](t, b, `document.body.dataset.channel`); ch != "desktop" {
		t.Fatalf("the built-in persona's page is on %q, want desktop", ch)
	}
	b.do(t, chromedp.SendKeys(chromedp.CSS("#text"), "你好青蓝"), chromedp.Click(chromedp.CSS("#send")))
	b.until(t, "青蓝's reply is shown", `[...document.querySelectorAll('#log li.assistant')].some(li => li.dataset.id && li.textContent.includes('今天想聊什么'))`)
	b.until(t, "the reply's stream ends", `window.cyanEvents.at(-1) === 'done'`)
	b.do(t, chromedp.Navigate("about:blank")) // no page left to call a stopped daemon
	r.stop()

	// Switched to Seraphina: her own conversation, opened with her greeting.
	r = startRigIn(t, home, "127.0.0.1:0", "persona: "+sera+"\n")
	b.do(t, chromedp.Navigate(r.base+"/"))
	b.until(t, "the page is ready", `document.body.dataset.ready === 'true'`)
	b.until(t, "the greeting is shown on open", `[...document.querySelectorAll('#log li')].length === 1 && document.querySelector('#log li.assistant')?.textContent.includes("The name's Seraphina")`)
	b.until(t, "the greeting is spoken", `(window.cyanHeard || []).map(h => h.text).join(' ').includes('heal you')`)
	if got := eval[string](t, b, `document.body.dataset.channel + ' | ' + document.getElementById('name').textContent`); got != "desktop:Seraphina | Seraphina desktop:Seraphina" {
		t.Errorf("the page says it is in %q, want Seraphina's conversation desktop:Seraphina", got)
	}
	if eval[bool](t, b, `document.getElementById('log').textContent.includes('青蓝') || document.getElementById('log').textContent.includes('今天想聊什么')`) {
		t.Error("Seraphina's conversation shows 青蓝's messages")
	}
	shoot(t, b, "persona-switch-1100x760.png")
	if n := len(history(t, r.base, "desktop:Seraphina")); n != 1 {
		t.Errorf("Seraphina's channel holds %d messages, want her greeting", n)
	}
	b.do(t, chromedp.Navigate("about:blank")) // no page left to call a stopped daemon
	r.stop()

	// Back to 青蓝: the old conversation, as it was, and no greeting of hers.
	r = startRigIn(t, home, "127.0.0.1:0", "")
	b.do(t, chromedp.Navigate(r.base+"/"))
	b.until(t, "the page is ready", `document.body.dataset.ready === 'true'`)
	b.until(t, "the old conversation is shown", `[...document.querySelectorAll('#log li')].map(li => li.textContent).join('|') === '你好青蓝|我在呢，今天想聊什么？'`)
	if ch := eval[string](t, b, `document.body.dataset.channel`); ch != "desktop" {
		t.Errorf("back on the built-in persona the page is on %q, want desktop", ch)
	}
	// And Seraphina's is kept, to return to.
	if m := history(t, r.base, "desktop:Seraphina"); len(m) != 1 || !strings.Contains(m[0], "The name's Seraphina") {
		t.Errorf("Seraphina's conversation after switching back: %q", m)
	}
	if errs := b.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
}

// history is the texts of a channel's stored messages.
func history(t *testing.T, base, channel string) []string {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/messages?channel=" + channel)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Messages []struct{ Text string } `json:"messages"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range list.Messages {
		out = append(out, m.Text)
	}
	return out
}

// TestPageFollowsTheSwitchedPersona: a page left open on 青蓝's
// conversation, when the daemon comes back with Seraphina, reloads onto
// Seraphina's own conversation and its greeting.
func TestPageFollowsTheSwitchedPersona(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	home := t.TempDir()
	sera := filepath.Join(home, "Seraphina")
	if err := os.Rename(importCard(t, "st-seraphina.png"), sera); err != nil {
		t.Fatal(err)
	}
	r := startRigIn(t, home, "127.0.0.1:0", "")
	c := plug(t, strings.TrimPrefix(r.base, "http://"))
	r.say(llmtest.Reply{Text: "我在呢。"})
	b.do(t, chromedp.Navigate(c.url()+"/"))
	b.until(t, "the page is ready", `document.body.dataset.ready === 'true' && document.body.dataset.channel === 'desktop'`)
	b.do(t, chromedp.SendKeys(chromedp.CSS("#text"), "你好青蓝"), chromedp.Click(chromedp.CSS("#send")))
	b.until(t, "青蓝's reply is shown", `[...document.querySelectorAll('#log li.assistant')].some(li => li.dataset.id && li.textContent.includes('我在呢'))`)
	b.until(t, "the reply's stream ends", `window.cyanEvents.at(-1) === 'done'`)

	c.set(false)
	r.stop()
	r = startRigIn(t, home, "127.0.0.1:0", "persona: "+sera+"\n")
	c.retarget(strings.TrimPrefix(r.base, "http://"))
	c.set(true)
	// The page reloads: a poll the reload cuts short is polled again.
	for i := 0; ; i++ {
		ctx, cancel := context.WithTimeout(b.Context(), browsertest.Timeout)
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.body?.dataset.channel === 'desktop:Seraphina' && document.body.dataset.ready === 'true'`, chromedp.WithPollingInterval(50*time.Millisecond)))
		cancel()
		if err == nil {
			break
		}
		if i == 3 || !strings.Contains(err.Error(), "navigated") && !strings.Contains(err.Error(), "context") {
			t.Fatalf("the open page does not move to Seraphina's conversation: %v", err)
		}
	}
	b.until(t, "her greeting alone is shown", `[...document.querySelectorAll('#log li')].length === 1 && document.querySelector('#log li.assistant')?.textContent.includes("The name's Seraphina")`)
}
