package web_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestPagePhoneWithVRMAndSubtitle: on a 390×844 screen with a VRM face and
// a subtitle — the one a reply speaks, then one of four lines — the ♪ and
// ⚙ buttons are wholly inside the viewport and inside the stage (which
// clips what overflows it), and the subtitle shows the fragment without
// its stray quotes.
func TestPagePhoneWithVRMAndSubtitle(t *testing.T) {
	t.Parallel()
	requireTool(t, "espeak-ng")
	b := newGLBrowser(t)
	r := startVRMRig(t, vrmPersona(t, testVRM(false), ""))
	b.do(t, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(1)))
	b.do(t, chromedp.Navigate(r.base+"/?channel=desktop"))
	b.until(t, "the page is ready", `document.body.dataset.ready === 'true'`)
	b.until(t, "the VRM draws", `window.cyanAvatar?.kind === 'vrm' && window.cyanAvatar.frames > 3`)
	b.do(t, chromedp.SendKeys(chromedp.CSS("#text"), "今天去公园吗"), chromedp.Click(chromedp.CSS("#send")))
	b.until(t, "the subtitle shows the reply", fmt.Sprintf(`document.getElementById('subtitle').textContent === %q`, happyLine))

	inside := func(when string) {
		t.Helper()
		var boxes map[string][4]float64
		js := `(() => {
			const r = (id) => { const b = document.getElementById(id).getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
			return {mute: r('mute'), settings: r('open-settings'), stage: r('stage'), view: [0, 0, window.innerWidth, window.innerHeight]};
		})()`
		boxes = eval[map[string][4]float64](t, b, js)
		for _, id := range []string{"mute", "settings"} {
			x := boxes[id]
			for _, outer := range []string{"view", "stage"} {
				o := boxes[outer]
				if x[2]-x[0] < 10 || x[0] < o[0] || x[1] < o[1] || x[2] > o[2] || x[3] > o[3] {
					j, _ := json.Marshal(boxes)
					t.Errorf("%s: the %s button %v is not wholly inside the %s %v (%s)", when, id, x, outer, o, j)
				}
			}
		}
	}
	inside("with the reply's subtitle")
	shoot(t, b, "phone-vrm-subtitle.png")
	long := strings.Repeat("这是一段很长的字幕，用来看按钮是否还在屏幕里。", 6)
	eval[bool](t, b, fmt.Sprintf(`(document.getElementById('subtitle').textContent = %q, true)`, long))
	inside("with a subtitle of many lines")

	// The fragments a reply is cut into, as the subtitle shows them.
	eval[bool](t, b, `(import('/app/subtitle.js').then(m => { window.cleanFragment = m.cleanFragment; }), true)`)
	b.until(t, "the subtitle module loads", `typeof window.cleanFragment === 'function'`)
	for in, want := range map[string]string{
		"“你好，我是青蓝。":      "你好，我是青蓝。",
		"今天真好。”":         "今天真好。",
		"”今天真好。":         "今天真好。",
		"“你好。”":          "“你好。”",
		"他说：“走吧”":        "他说：“走吧”",
		`"Hi there.`:     "Hi there.",
		`She said "hi"`:  `She said "hi"`,
		"(smiles) hello": "(smiles) hello",
		"hello (smiles":  "hello (smiles",
		"【注意":            "注意",
		"「はい」と言った。」":     "「はい」と言った。",
		"“":              "",
	} {
		got := eval[string](t, b, fmt.Sprintf(`window.cleanFragment(%q)`, in))
		if got != want {
			t.Errorf("cleanFragment(%q) = %q, want %q", in, got, want)
		}
	}
	if errs := b.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
}
