package web_test

import (
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cyan-agent/cyan/internal/llmtest"
)

// cable is a TCP proxy between the browser and the daemon that can be
// pulled out (every connection cut, new ones refused) and plugged back: the
// daemon going away, as the page sees it.
type cable struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	up     bool
	conns  map[net.Conn]bool
	wg     sync.WaitGroup
}

func plug(t *testing.T, target string) *cable {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &cable{ln: ln, target: target, up: true, conns: map[net.Conn]bool{}}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			c.mu.Lock()
			up := c.up
			if up {
				c.conns[in] = true
			}
			c.mu.Unlock()
			if !up {
				in.Close()
				continue
			}
			c.wg.Add(1)
			go func() {
				defer c.wg.Done()
				c.mu.Lock()
				target := c.target
				c.mu.Unlock()
				out, err := net.Dial("tcp", target)
				if err != nil {
					in.Close()
					return
				}
				c.mu.Lock()
				c.conns[out] = true
				c.mu.Unlock()
				done := make(chan struct{}, 2)
				go func() { io.Copy(out, in); out.Close(); done <- struct{}{} }()
				go func() { io.Copy(in, out); in.Close(); done <- struct{}{} }()
				<-done
				<-done
			}()
		}
	}()
	t.Cleanup(func() { c.ln.Close(); c.set(false); c.wg.Wait() })
	return c
}

func (c *cable) url() string { return "http://" + c.ln.Addr().String() }

// retarget points the cable at another daemon (host:port), for the
// connections made from now on.
func (c *cable) retarget(target string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.target = target
}

// set plugs the cable in (true) or pulls it out, cutting what runs.
func (c *cable) set(up bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.up = up
	if !up {
		for k := range c.conns {
			k.Close()
		}
		clear(c.conns)
	}
}

// TestPageConnectionRetryStopInterrupt: the page says when the daemon is
// gone; a message sent then is marked unsent and goes out by itself, once,
// when the daemon is back; a new message interrupts the old reply's speech
// (no segment of it starts after, not even one whose audio was still on
// its way); the stop button stops the streaming
// reply and the voice, and the reply still arrives whole, shown once.
func TestPageConnectionRetryStopInterrupt(t *testing.T) {
	t.Parallel()
	requireTool(t, "espeak-ng")
	b := newBrowser(t)
	r := startRig(t, "127.0.0.1:0")
	c := plug(t, strings.TrimPrefix(r.base, "http://"))
	b.do(t, chromedp.Navigate(c.url()+"/?channel=desktop"))
	b.until(t, "the page is ready and connected", `document.body.dataset.ready === 'true' && document.getElementById('conn').dataset.state === 'online'`)

	// The daemon goes away: the page says so.
	c.set(false)
	b.until(t, "the page shows the connection lost", `document.getElementById('conn').dataset.state !== 'online'`)
	b.do(t, chromedp.SendKeys(chromedp.CSS("#text"), "are you there?"), chromedp.Click(chromedp.CSS("#send")))
	b.until(t, "the message is marked unsent, with a retry", `(() => { const li = [...document.querySelectorAll('#log li.user')].at(-1); return !!(li && li.classList.contains('failed') && li.querySelector('button.retry')); })()`)
	// Back: it goes out by itself, and is answered once.
	r.say(llmtest.Reply{Text: "I am here."})
	c.set(true)
	b.until(t, "connected again", `document.getElementById('conn').dataset.state === 'online'`)
	b.until(t, "the unsent message went out and was answered", `[...document.querySelectorAll('#log li.assistant')].some(li => li.textContent === 'I am here.' && li.dataset.id)`)
	if n := eval[int](t, b, `document.querySelectorAll('#log li.failed').length`); n != 0 {
		t.Errorf("%d messages still marked unsent", n)
	}
	texts := eval[[]string](t, b, `[...document.querySelectorAll('#log li')].map(li => li.className.split(' ')[0] + ': ' + li.textContent)`)
	if strings.Join(texts, "|") != "user: are you there?|assistant: I am here." {
		t.Errorf("the page shows %q", texts)
	}

	// A long reply is spoken; a new message interrupts it. Its segments
	// play at their own speed (fasterVoice), so that the new message
	// comes while one of them plays, not between two.
	eval[bool](t, b, `(window.voiceRate = 1) === 1`)
	long := strings.Repeat("This is a long story about the forest. ", 12)
	r.say(llmtest.Reply{Text: long, ChunkSize: 8, ChunkDelay: 5 * time.Millisecond}, llmtest.Reply{Text: "Short answer."})
	b.do(t, chromedp.SendKeys(chromedp.CSS("#text"), "tell me a story"), chromedp.Click(chromedp.CSS("#send")))
	// The new message is typed while the story is told, and sent while a
	// segment of it sounds with a second of it still to go: an interrupt
	// between two segments (one ended, the next still being fetched) has
	// nothing sounding to cut, and is the check below.
	b.do(t, chromedp.SendKeys(chromedp.CSS("#text"), "stop, please"))
	b.until(t, "a segment of the story sounds, a second of it to go", `(window.cyanPlayed || []).some(p => p.text.includes('long story') && !p.ended && Date.now() < p.started + p.duration * 1000 - 1000)`)
	storyTurn := eval[string](t, b, `window.cyanPlayed.find(p => p.text.includes('long story')).turn`)
	// sentAt is when the new message is sent: its form's submit, which
	// interrupts the voice.
	eval[bool](t, b, `document.addEventListener('submit', () => { window.sentAt ??= Date.now(); }, true) === undefined`)
	b.do(t, chromedp.Click(chromedp.CSS("#send")))
	b.until(t, "the new reply is spoken", `(window.cyanPlayed || []).some(p => p.text.includes('Short answer') && p.ended)`)
	late := eval[int](t, b, fmt.Sprintf(`window.cyanPlayed.filter(p => p.turn === %q && p.started > window.sentAt).length`, storyTurn))
	if late != 0 {
		t.Errorf("%d segments of the old reply started after the new message", late)
	}
	if !eval[bool](t, b, fmt.Sprintf(`window.cyanPlayed.filter(p => p.turn === %q).some(p => p.interrupted)`, storyTurn)) {
		t.Error("the old reply's segment was not interrupted")
	}
	eval[bool](t, b, `(window.voiceRate = 0) === 0`)

	// A segment whose audio is still on its way when a new message comes
	// stays silent: the page holds the next story's audio until the new
	// message is sent, then lets it arrive.
	eval[bool](t, b, `(() => { const f = window.fetch; let hold = true; window.fetch = (u, o) => { if (hold && String(u).includes('/api/v1/speech/')) { hold = false; return new Promise((r) => { window.releaseAudio = () => r(f(u, o)); }); } return f(u, o); }; return true; })()`)
	r.say(llmtest.Reply{Text: "Once upon a time, a fox."}, llmtest.Reply{Text: "Fine, no fox."})
	b.do(t, chromedp.SendKeys(chromedp.CSS("#text"), "another story"), chromedp.Click(chromedp.CSS("#send")))
	b.until(t, "the story's audio is on its way", `typeof window.releaseAudio === 'function'`)
	b.do(t, chromedp.SendKeys(chromedp.CSS("#text"), "no, stop"), chromedp.Click(chromedp.CSS("#send")))
	b.until(t, "the new reply is shown", `[...document.querySelectorAll('#log li.assistant')].some(li => li.textContent === 'Fine, no fox.')`)
	eval[bool](t, b, `(window.releaseAudio(), true)`)
	b.until(t, "the new reply is spoken", `(window.cyanPlayed || []).some(p => p.text === 'Fine, no fox.' && p.ended)`)
	if eval[bool](t, b, `window.cyanPlayed.some(p => p.text.includes('upon a time'))`) {
		t.Error("the story's segment, fetched when the new message came, still played")
	}

	// Stop while a reply streams: the stream and the voice stop, the reply
	// arrives whole when stored, once.
	slow := "Slowly, " + strings.Repeat("word by word, ", 30) + "the end."
	r.say(llmtest.Reply{Text: slow, ChunkSize: 2, ChunkDelay: 20 * time.Millisecond})
	b.do(t, chromedp.SendKeys(chromedp.CSS("#text"), "speak slowly"), chromedp.Click(chromedp.CSS("#send")))
	b.until(t, "the slow reply streams and the stop button shows", `document.querySelector('#log li.streaming')?.textContent.length > 10 && !document.getElementById('stop').hidden`)
	b.do(t, chromedp.Click(chromedp.CSS("#stop")))
	b.until(t, "the slow reply is shown whole, once", fmt.Sprintf(`[...document.querySelectorAll('#log li.assistant')].filter(li => li.textContent === %q && li.dataset.id).length === 1`, slow))
	b.until(t, "nothing streams or speaks", `document.getElementById('stop').hidden`)
	if n := eval[int](t, b, fmt.Sprintf(`[...document.querySelectorAll('#log li')].filter(li => li.textContent.startsWith('Slowly')).length`)); n != 1 {
		t.Errorf("the slow reply is shown %d times", n)
	}
	shoot(t, b, "connection-1100x760.png")

	// The settings: which voice (each segment voiced again with it, through
	// POST /api/v1/speech).
	b.do(t, chromedp.Click(chromedp.CSS("#open-settings")))
	b.until(t, "the settings open", `!document.getElementById('settings').hidden`)
	b.do(t, chromedp.SendKeys(chromedp.CSS("#voice-name"), "en-gb"), chromedp.Click(chromedp.CSS("#text")))
	r.say(llmtest.Reply{Text: "In another voice."})
	b.do(t, chromedp.SendKeys(chromedp.CSS("#text"), "change your voice"), chromedp.Click(chromedp.CSS("#send")))
	b.until(t, "the reply is spoken in the chosen voice", `(window.cyanPlayed || []).some(p => p.text === 'In another voice.' && p.voice === 'en-gb' && p.bytes > 1000 && p.ended)`)
	b.do(t, chromedp.EmulateViewport(390, 844))
	shoot(t, b, "settings-390x844.png")
}
