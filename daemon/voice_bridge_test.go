package daemon

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/bridge/onebot"
	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/internal/onebottest"
	"github.com/cyan-agent/cyan/internal/tgtest"
)

// requireTool skips when a program is missing, unless CYAN_REQUIRE_TOOLS=1
// (CI), where it fails.
func requireTool(t testing.TB, name, pkg string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CYAN_REQUIRE_TOOLS") == "1" {
			t.Fatalf("%s is required (CYAN_REQUIRE_TOOLS=1) but not installed: apt-get install %s", name, pkg)
		}
		t.Skipf("%s is not installed (apt-get install %s)", name, pkg)
	}
}

// voicedBridges starts the daemon with a QQ bridge (Lagrange.OneBot, the
// strictest about a record's format) and a Telegram bot whose chats
// tts.channels voices, with espeak-ng as the voice, and says hello in a
// QQ private chat and a Telegram private chat. The model answers "Hello
// there. Nice to meet you.".
func voicedBridges(t *testing.T, mode string) (*onebottest.Impl, *tgtest.Server) {
	t.Helper()
	tg := &tgtest.Server{Token: "123:right", Bot: tgtest.User{ID: 77, IsBot: true, FirstName: "cyan", Username: "cyan_bot"}}
	srv := httptest.NewServer(tg)
	t.Cleanup(srv.Close)
	yaml := "tts:\n  provider: espeak-ng\n  channels: [desktop, \"qq:private:*\", \"tg:*\"]\n  bridge_mode: " + mode + "\n" +
		"bridges:\n  onebot:\n    - {name: qq, mode: reverse, access_token: tok}\n" +
		"  telegram:\n    - {name: tg, token: \"123:right\", api_url: " + srv.URL + "}\n"
	r := newRig(t, map[string]string{"cyan.yaml": yaml})
	r.fake.SetDefault(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "Hello there. Nice to meet you."} })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	impl := &onebottest.Impl{SelfID: 10001, Token: "tok", Lagrange: true}
	if err := impl.Connect(ctx, "ws"+strings.TrimPrefix(r.base, "http")+onebot.ReversePath); err != nil {
		t.Fatal(err)
	}
	if _, err := impl.Private(onebottest.Sender{UserID: 42, Nickname: "ann"}, onebottest.Text("hello")); err != nil {
		t.Fatal(err)
	}
	tg.Push(tgtest.Message{From: &tgtest.User{ID: 5, FirstName: "bob"}, Chat: tgtest.Chat{ID: 5, Type: "private"}, Text: "hello", Date: time.Now().Unix()})
	return impl, tg
}

// waitVoice polls cond (the bridges deliver on their own goroutines) until
// it holds or 30 s pass.
func waitVoice(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
	}
}

// TestVoicedChatsGetTheTextThenAVoice: with tts.bridge_mode both, a voiced
// QQ private chat gets the text, then a record the OneBot fake takes (a
// WAV, which Lagrange.OneBot encodes to SILK), and a Telegram chat the
// text, then a voice message the Bot API fake posts as a voice (OGG with
// an Opus head).
func TestVoicedChatsGetTheTextThenAVoice(t *testing.T) {
	requireTool(t, "espeak-ng", "espeak-ng")
	requireTool(t, "ffmpeg", "ffmpeg")
	impl, tg := voicedBridges(t, "both")
	waitVoice(t, "a QQ record", func() bool { return len(impl.Records("private", 42)) > 0 })
	waitVoice(t, "a Telegram voice", func() bool { return len(tg.Voices(5)) > 0 })
	if got := impl.Posted("private", 42); len(got) != 1 || got[0] != "Hello there. Nice to meet you." {
		t.Errorf("QQ texts %q", got)
	}
	rec := impl.Records("private", 42)
	if len(rec) != 1 || rec[0].Format != "wav" || len(rec[0].Data) < 1000 {
		t.Errorf("QQ records: %d, %+v", len(rec), rec)
	}
	if got := tg.Posted(5); len(got) != 1 || got[0] != "Hello there. Nice to meet you." {
		t.Errorf("Telegram texts %q", got)
	}
	v := tg.Voices(5)
	if len(v) != 1 || !v[0].AsVoice || string(v[0].Data[:4]) != "OggS" {
		t.Errorf("Telegram voices: %+v", v)
	}
}

// TestVoiceModeSendsOnlyTheVoice: with tts.bridge_mode voice, the chats
// get the voice message and no text.
func TestVoiceModeSendsOnlyTheVoice(t *testing.T) {
	requireTool(t, "espeak-ng", "espeak-ng")
	requireTool(t, "ffmpeg", "ffmpeg")
	impl, tg := voicedBridges(t, "voice")
	waitVoice(t, "a QQ record", func() bool { return len(impl.Records("private", 42)) > 0 })
	waitVoice(t, "a Telegram voice", func() bool { return len(tg.Voices(5)) > 0 })
	if got := impl.Posted("private", 42); len(got) != 0 {
		t.Errorf("QQ texts %q, want none", got)
	}
	if got := tg.Posted(5); len(got) != 0 {
		t.Errorf("Telegram texts %q, want none", got)
	}
	if v := tg.Voices(5); !v[0].AsVoice {
		t.Errorf("the Telegram voice was not OGG/Opus")
	}
}

// brokenEncoder puts on PATH only espeak-ng and an "ffmpeg" that claims
// libopus and fails every encoding.
func brokenEncoder(t *testing.T) {
	t.Helper()
	requireTool(t, "espeak-ng", "espeak-ng")
	espeak, err := exec.LookPath("espeak-ng")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(espeak, filepath.Join(dir, "espeak-ng")); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\ncase \"$*\" in *-encoders*) echo ' A..... libopus'; exit 0;; esac\necho 'Error while encoding' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(dir, "ffmpeg"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
}

// TestAFailingEncoderStillDeliversTheText: when the encoder fails, a
// Telegram chat in both mode gets the text (and no voice), and in voice
// mode the text instead of the voice; the QQ chat, whose WAV needs no
// encoder, gets its voice.
func TestAFailingEncoderStillDeliversTheText(t *testing.T) {
	for _, mode := range []string{"both", "voice"} {
		t.Run(mode, func(t *testing.T) {
			brokenEncoder(t)
			impl, tg := voicedBridges(t, mode)
			waitVoice(t, "the Telegram text", func() bool { return len(tg.Posted(5)) > 0 })
			waitVoice(t, "a QQ record", func() bool { return len(impl.Records("private", 42)) > 0 })
			if got := tg.Posted(5); got[0] != "Hello there. Nice to meet you." {
				t.Errorf("Telegram texts %q", got)
			}
			if v := tg.Voices(5); len(v) != 0 {
				t.Errorf("Telegram voices %+v, want none", v)
			}
		})
	}
}
