package web_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/internal/ttstest"
)

// sovitsScale is how much faster than api_v2 the GPT-SoVITS fake of
// TestPageVoicesALongReplyInOrder runs, and the voice's timeout with it:
// 2.4 s a sentence becomes 80 ms, tts.timeout's default 60 s becomes 2 s.
const sovitsScale = 30

// TestPageVoicesALongReplyInOrder: a reply of 30 sentences, voiced by the
// GPT-SoVITS fake over HTTP — ttstest.SoVITSLatency a sentence, one at a
// time as api_v2 makes them, scaled by 1/sovitsScale with the timeout —
// is heard on the page whole and in order. The reply comes at once, and
// together its sentences take longer than one timeout (30 × 2.4 s against
// 60 s, scaled): a timeout that began while a sentence waits behind the
// others would lose the last ones.
func TestPageVoicesALongReplyInOrder(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	fake := &ttstest.GPTSoVITS{Rate: 16000, Brief: true, Latency: func(text string) time.Duration {
		return ttstest.SoVITSLatency(text) / sovitsScale
	}}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	r := startRigWith(t, "127.0.0.1:0", "tts:\n  provider: gpt-sovits\n  base_url: "+srv.URL+
		"\n  timeout: 2s\n  refs: {neutral: {audio: /r/calm.wav, text: 你好呀, lang: zh}}\n")
	var sentences []string
	for i := range 30 {
		sentences = append(sentences, fmt.Sprintf("第%d句，今天天气很好，我们出去走走吧。", i+1))
	}
	// Written at once: every sentence waits its turn from the start.
	r.say(llmtest.Reply{Text: strings.Join(sentences, ""), ChunkSize: 1 << 10})

	b.do(t, chromedp.Navigate(r.base+"/"))
	b.until(t, "the page is ready", `document.body.dataset.ready === 'true'`)
	b.do(t, chromedp.SendKeys(chromedp.CSS("#text"), "讲长一点"), chromedp.Click(chromedp.CSS("#send")))
	b.until(t, "the reply is shown", `[...document.querySelectorAll('#log li.assistant')].some(li => li.dataset.id && li.textContent.includes('第30句'))`)
	// (the reply's segments: those of the turn of its first)
	const mine = `(() => { const all = window.cyanPlayed || []; const f = all.find(p => p.text.startsWith('第1句')); return f ? all.filter(p => p.turn === f.turn) : []; })()`
	// To its end, or to its last speech event once a segment failed (the
	// voice note says so).
	b.until(t, "the reply is heard to its end", mine+`.some(p => p.text.includes('第30句') && p.ended) ||
		document.getElementById('voice-note').textContent !== '' && window.cyanHeard.some(h => h.text.includes('第30句'))`)
	played := eval[[]string](t, b, mine+`.map(p => p.text)`)
	if got := strings.Join(played, ""); got != strings.Join(sentences, "") {
		t.Errorf("the page played %d segments:\n%q\nwant the 30 sentences in order; the page's voice note: %q", len(played), played,
			eval[string](t, b, `document.getElementById('voice-note').textContent`))
	}
	if errs := eval[int](t, b, mine+`.filter(p => !p.ended || p.bytes === 0).length`); errs != 0 {
		t.Errorf("%d segments did not play through", errs)
	}
	if n := len(fake.Requests()); n < 30 {
		t.Errorf("the voice asked for %d clips, want at least one a sentence", n)
	}
}
