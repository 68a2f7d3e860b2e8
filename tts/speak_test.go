package tts_test

import (
	"testing"

	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/tts"
)

// A turn that calls speak is voiced by its segments, in order, with their
// emotion and language; its text is not voiced, neither what comes after
// the call nor what was still held or synthesizing when it came.
func TestVoiceSpeaksTheSpeakSegmentsInsteadOfTheText(t *testing.T) {
	g := newGated()
	out := newSink()
	v, _ := tts.NewVoice(tts.Options{Provider: g, Channels: []string{"desktop"}, Emit: out.emit})
	defer v.Close()

	v.Delta("desktop", "m1", "先说一句。然后还在写", false) // "先说一句。" is synthesizing
	v.Speak("desktop", "m1", "t1", []packets.Segment{
		{Emotion: "happy", Language: "ja", Text: "やった！"},
		{Emotion: "sad", Language: "zh", Text: "可是我要走了。"},
	})
	v.Delta("desktop", "m1", "，这段文字不念。", false)
	v.Delta("desktop", "m1", "", true)
	v.TurnDone("desktop", "m1")
	v.Outgoing("desktop", "m1", "r1", "先说一句。然后还在写，这段文字不念。")            // its stored reply
	v.Speak("desktop", "m1", "t1", []packets.Segment{{Text: "twice"}}) // the same result again
	g.open("先说一句。")
	g.open("やった！")
	g.open("可是我要走了。")
	a, b := out.next(t), out.next(t)
	if a.Text != "やった！" || a.Emotion != "happy" || a.Language != "ja" || a.Turn != "m1" || a.Seq != 0 {
		t.Errorf("first speech %+v", a)
	}
	if b.Text != "可是我要走了。" || b.Emotion != "sad" || b.Language != "zh" || b.Seq != 1 {
		t.Errorf("second speech %+v", b)
	}
	v.Close()
	out.none(t)
}

// A turn whose only output is a speak call is voiced; segments without an
// emotion or a language get them, markup is not read.
func TestVoiceSpeaksASpeakOnlyTurn(t *testing.T) {
	g := newGated()
	out := newSink()
	v, _ := tts.NewVoice(tts.Options{Provider: g, Channels: []string{"desktop"}, Emit: out.emit})
	defer v.Close()
	v.Speak("desktop", "m1", "t1", []packets.Segment{{Text: "**你好**`code`"}, {Text: "```x```"}})
	v.TurnDone("desktop", "m1")
	g.open("你好")
	sp := out.next(t)
	if sp.Text != "你好" || sp.Emotion != "neutral" || sp.Language != "zh" {
		t.Errorf("speech %+v", sp)
	}
	v.Close()
	out.none(t)
}

// Live text starts an utterance per turn; a message voiced whole is voiced
// once, by its key (a greeting has no turn).
func TestVoiceFollowsLiveTextAndKeys(t *testing.T) {
	g := newGated()
	out := newSink()
	v, _ := tts.NewVoice(tts.Options{Provider: g, Channels: []string{"desktop"}, Emit: out.emit, Actions: tts.ActionsNarrate, Narrator: "en-gb"})
	defer v.Close()
	v.Outgoing("desktop", "", "g1", "欢迎！")
	v.Outgoing("desktop", "", "g1", "欢迎！")
	g.open("欢迎！")
	if sp := out.next(t); sp.Text != "欢迎！" {
		t.Errorf("greeting %+v", sp)
	}
	v.Delta("desktop", "m1", "*笑* 好", false)
	v.Delta("desktop", "m2", "Next turn.", false) // ends m1's utterance
	v.TurnDone("desktop", "m2")
	g.open("笑")
	g.open("好")
	g.open("Next turn.")
	n, a, b := out.next(t), out.next(t), out.next(t)
	if n.Emotion != tts.Narration || n.Text != "笑" || a.Text != "好" || a.Turn != "m1" || b.Turn != "m2" {
		t.Errorf("speech %+v %+v %+v", n, a, b)
	}
	v.Close()
	out.none(t)
}

// TestSetActionsChangesTheNextReply: the page's settings change what
// *actions* become for the replies begun after it; a mode that is not
// skip, speak or narrate is refused and changes nothing.
func TestSetActionsChangesTheNextReply(t *testing.T) {
	g := newGated()
	out := newSink()
	v, err := tts.NewVoice(tts.Options{Provider: g, Channels: []string{"desktop"}, Actions: tts.ActionsSkip, Emit: out.emit})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if v.Actions() != tts.ActionsSkip {
		t.Fatalf("Actions() = %q at start", v.Actions())
	}
	if err := v.SetActions("loud"); err == nil || v.Actions() != tts.ActionsSkip {
		t.Fatalf("SetActions(loud) = %v, now %q", err, v.Actions())
	}
	if err := v.SetActions(tts.ActionsNarrate); err != nil || v.Actions() != tts.ActionsNarrate {
		t.Fatalf("SetActions(narrate) = %v, now %q", err, v.Actions())
	}
	// The next reply reads its action as a narrated segment of its own.
	v.Delta("desktop", "m2", "Hi! *waves* Bye.", false)
	v.Delta("desktop", "m2", "", true)
	v.TurnDone("desktop", "m2")
	for _, s := range []string{"Hi!", "waves", "Bye."} {
		g.open(s)
	}
	a, b := out.next(t), out.next(t)
	if a.Text != "Hi!" || b.Text != "waves" || b.Emotion != tts.Narration {
		t.Fatalf("after SetActions(narrate): %+v, %+v", a, b)
	}
	if _, err := tts.NewVoice(tts.Options{Provider: newGated(), Actions: "loud"}); err == nil {
		t.Fatal("a voice made with actions loud")
	}
}
