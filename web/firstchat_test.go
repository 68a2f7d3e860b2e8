package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/persona/card"
)

// heard is a speech event as the page received it (player.js cyanHeard).
type heard struct {
	Seq  int    `json:"seq"`
	Turn string `json:"turn"`
	Text string `json:"text"`
}

// importCard makes a persona folder of a real card (persona/card's
// testdata/wild, SOURCES.md says where it comes from).
func importCard(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "persona", "card", "testdata", "wild", name))
	if err != nil {
		t.Fatal(err)
	}
	c, err := card.Read(data)
	if err != nil {
		t.Fatal(err)
	}
	f, err := card.ToFolder(c)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "persona")
	if err := f.Write(dir, false); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestPageFirstChatWithACard: the first chat with SillyTavern's own
// Seraphina card, imported. The card's picture is the face; the greeting is
// shown when the page opens, at the top, before anything is said; the
// question gets one reply, shown once, its markdown rendered; the speech
// events of the greeting and of the reply each come once.
func TestPageFirstChatWithACard(t *testing.T) {
	t.Parallel()
	requireTool(t, "espeak-ng")
	b := newBrowser(t)
	dir := importCard(t, "st-seraphina.png")
	r := startRigWith(t, "127.0.0.1:0", "persona: "+dir+"\n")
	const reply = "*She smiles softly.* I am well. Here is the charm:\n```\nward(glade)\n```\nRest now, traveler."
	r.say(llmtest.Reply{Text: reply, ChunkSize: 4, ChunkDelay: 10 * time.Millisecond})

	b.do(t, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(r.base+"/?channel=desktop"))
	b.until(t, "the page is ready", `document.body.dataset.ready === 'true'`)
	// The face is the card's picture.
	b.until(t, "the card's picture is the face", `(() => { const i = document.querySelector('#avatar img'); return i && i.complete && i.naturalWidth > 0 && i.src.endsWith('/api/v1/persona/avatar/neutral.png'); })()`)
	// The greeting, on open, alone.
	b.until(t, "the greeting is shown on open", `[...document.querySelectorAll('#log li')].length === 1 && document.querySelector('#log li.assistant')?.textContent.includes("The name's Seraphina")`)
	if eval[bool](t, b, `document.querySelector('#log li.assistant em.action') === null`) {
		t.Error("the greeting's *actions* are not in italics")
	}
	b.until(t, "the greeting is spoken to its end", `(window.cyanHeard || []).map(h => h.text).join(' ').includes('heal you')`)
	b.until(t, "connected", `document.getElementById('conn').dataset.state === 'online'`)
	shoot(t, b, "first-chat-1280x800.png")

	b.do(t, chromedp.SendKeys(chromedp.CSS("#text"), "How are you?"), chromedp.Click(chromedp.CSS("#send")))
	b.until(t, "the reply is shown", `[...document.querySelectorAll('#log li.assistant')].some(li => li.dataset.id && li.querySelector('pre') && li.textContent.includes('Rest now, traveler.'))`)
	b.until(t, "the reply's stream ends", `window.cyanEvents.at(-1) === 'done'`)
	b.until(t, "the reply is spoken to its end", `(window.cyanHeard || []).map(h => h.text).join(' ').includes('traveler')`)
	texts := eval[[]string](t, b, `[...document.querySelectorAll('#log li')].map(li => li.className.split(' ')[0] + ': ' + li.textContent)`)
	if len(texts) != 3 || !strings.HasPrefix(texts[0], "assistant: *You wake") && !strings.HasPrefix(texts[0], "assistant: You wake") ||
		texts[1] != "user: How are you?" || !strings.HasPrefix(texts[2], "assistant: She smiles softly. I am well.") {
		t.Errorf("the page shows\n%s\nwant the greeting, the question, one reply", strings.Join(texts, "\n"))
	}
	// Stored once: the channel holds the greeting, the question, the reply.
	resp, err := http.Get(r.base + "/api/v1/messages?channel=desktop")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Messages []struct{ Role, Text string } `json:"messages"`
	}
	json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if len(list.Messages) != 3 || list.Messages[0].Role != "assistant" || list.Messages[1].Text != "How are you?" {
		t.Errorf("the channel holds %+v, want the greeting, the question and the reply", list.Messages)
	}
	// Each speech event once: no segment of a turn twice, and the greeting's
	// and the reply's words each in one event only.
	var got []heard
	raw := eval[string](t, b, `JSON.stringify(window.cyanHeard)`)
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, h := range got {
		k := fmt.Sprintf("%s#%d", h.Turn, h.Seq)
		if seen[k] {
			t.Errorf("speech event %s came twice: %+v", k, got)
		}
		seen[k] = true
	}
	count := func(word string) int {
		n := 0
		for _, h := range got {
			n += strings.Count(h.Text, word)
		}
		return n
	}
	for _, w := range []string{"guardian of this forest", "heal you", "I am well", "traveler"} {
		if n := count(w); n != 1 {
			t.Errorf("%q is in %d speech events, want 1: %+v", w, n, got)
		}
	}
	// The reply's code block is shown, never spoken.
	if n := count("glade"); n != 0 {
		t.Errorf("the code block is in %d speech events, want none: %+v", n, got)
	}
	shoot(t, b, "first-chat-reply-1280x800.png")
	b.do(t, chromedp.EmulateViewport(390, 844))
	ratio := eval[float64](t, b, `document.getElementById('avatar').getBoundingClientRect().height / innerHeight`)
	if ratio > 1.0/3 {
		t.Errorf("on a 390×844 phone the avatar takes %.0f%% of the height, want at most a third", ratio*100)
	}
	if w := eval[float64](t, b, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("on a 390×844 phone the page is %v px wide", w)
	}
	shoot(t, b, "first-chat-390x844.png")

	if errs := b.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
}

// shoot saves a screenshot of the page among the test's artifacts (and in
// CYAN_SHOTS, when set, to look at).
func shoot(t *testing.T, b *browser, name string) {
	t.Helper()
	shot, err := chromedp.Run(b.Context(), chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	dirs := []string{t.ArtifactDir()}
	if d := os.Getenv("CYAN_SHOTS"); d != "" {
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		if err := os.WriteFile(filepath.Join(d, name), shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("screenshot: %s", name)
}

// TestPageChoosesWhatActionsBecome: the settings' actions choice sets the
// daemon's voice (PUT /api/v1/speech/actions), and a page opened again
// sends the kept choice to a daemon that started from tts.actions.
func TestPageChoosesWhatActionsBecome(t *testing.T) {
	t.Parallel()
	requireTool(t, "espeak-ng")
	b := newBrowser(t)
	r := startRigWith(t, "127.0.0.1:0", "")
	actions := func() string {
		resp, err := http.Get(r.base + "/api/v1/persona?channel=desktop")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var p struct{ Actions string }
		json.NewDecoder(resp.Body).Decode(&p)
		return p.Actions
	}
	b.do(t, chromedp.Navigate(r.base+"/?channel=desktop"))
	b.until(t, "the page is ready", `document.body.dataset.ready === 'true'`)
	if got := eval[string](t, b, `document.getElementById('actions').value`); got != "skip" || actions() != "skip" {
		t.Fatalf("at start the page shows %q, the daemon %q; want skip", got, actions())
	}
	b.do(t, chromedp.Click(chromedp.CSS("#open-settings")))
	eval[bool](t, b, `(() => { const s = document.getElementById('actions'); s.value = 'narrate'; s.dispatchEvent(new Event('change')); return true; })()`)
	b.until(t, "the choice is kept", `localStorage.getItem('cyan.actions') === 'narrate'`)
	for i := 0; actions() != "narrate"; i++ {
		if i > 500 {
			t.Fatalf("the daemon's actions stayed %q", actions())
		}
		time.Sleep(10 * time.Millisecond) // the page's PUT is on its way
	}
	// The daemon starts over from tts.actions; the page opened again sends
	// the kept choice.
	if code := put(t, r.base+"/api/v1/speech/actions", `{"actions": "skip"}`); code != 200 {
		t.Fatalf("PUT skip: %d", code)
	}
	b.do(t, chromedp.Navigate(r.base+"/?channel=desktop"))
	b.until(t, "the page is ready again", `document.body.dataset.ready === 'true'`)
	b.until(t, "the kept choice is shown", `document.getElementById('actions').value === 'narrate'`)
	if got := actions(); got != "narrate" {
		t.Fatalf("after opening again the daemon's actions are %q, want the kept narrate", got)
	}
}

func put(t *testing.T, url, body string) int {
	t.Helper()
	req, _ := http.NewRequest("PUT", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
