package bridge

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cyan-agent/cyan/router"
)

// voiceAdapter is the fake platform taking voice messages.
type voiceAdapter struct{ *fakeAdapter }

func (voiceAdapter) VoiceFormat() string { return "audio/fake" }

// voiceRig is a bridge whose private chats are voiced in mode; its voice
// is "AUDIO:" and the text, or fails with err.
func voiceRig(t *testing.T, mode string, err error, sent SentLog) *rig {
	return newRig(t, func(o *Options) {
		o.Adapter = voiceAdapter{o.Adapter.(*fakeAdapter)}
		o.VoiceMode = mode
		o.Voiced = func(ch string) bool { return strings.HasPrefix(ch, "t:private:") }
		o.Voice = func(_ context.Context, ch, text, format string) ([]byte, error) {
			if format != "audio/fake" {
				t.Errorf("the voice was asked for %q", format)
			}
			if err != nil {
				return nil, err
			}
			return []byte("AUDIO:" + text), nil
		}
		if sent != nil {
			o.Sent = sent
		}
	})
}

// In both mode, a voiced chat gets the text and then its voice, once
// (offered again after a restart, neither is sent again); an unvoiced
// chat gets the text only.
func TestAVoicedChatGetsTheTextThenTheVoice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sent := newMemSent(16)
		r := voiceRig(t, VoiceBoth, nil, sent)
		defer r.stop()
		r.out.pushPacket(router.Packet{Key: "k1", Channel: "t:private:7", Kind: router.KindReply, Text: "hi there"})
		synctest.Wait()
		r.out.pushPacket(router.Packet{Key: "k1", Channel: "t:private:7", Kind: router.KindReply, Text: "hi there"})
		r.out.pushPacket(router.Packet{Key: "k2", Channel: "t:group:42", Kind: router.KindReply, Text: "all"})
		synctest.Wait()
		want := []string{"t:private:7 hi there", "t:private:7 <voice AUDIO:hi there>", "t:group:42 all"}
		if got := r.ad.sentSoFar(); !slices.Equal(got, want) {
			t.Errorf("sent %q, want %q", got, want)
		}
		if _, ok := sent.Sent("k1#voice"); !ok {
			t.Error("the voice's key was not kept")
		}
	})
}

// In voice mode the chat gets the voice only; when the voice cannot be
// made, the text. In both mode a failed voice leaves the text alone.
func TestVoiceModeAndAFailedVoice(t *testing.T) {
	for _, tt := range []struct {
		mode string
		err  error
		want string
	}{
		{VoiceOnly, nil, "t:private:7 <voice AUDIO:hi there>"},
		{VoiceOnly, errors.New("the encoder failed"), "t:private:7 hi there"},
		{VoiceBoth, errors.New("the encoder failed"), "t:private:7 hi there"},
		{VoiceText, nil, "t:private:7 hi there"},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := voiceRig(t, tt.mode, tt.err, nil)
				defer r.stop()
				r.out.push("t:private:7", "k1", "hi there")
				synctest.Wait()
				if got := r.ad.sentSoFar(); !slices.Equal(got, []string{tt.want}) {
					t.Errorf("sent %q, want %q", got, tt.want)
				}
				if r.out.pending() != 0 {
					t.Error("the packet was not acknowledged")
				}
			})
		})
	}
}

// In both mode the chat's next reply never waits for the voice of the one
// before: its text goes at once; a voice still being made when the next
// text is sent is dropped (and logged), the next one's voice is sent.
func TestTheNextReplyDoesNotWaitForTheVoice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs strings.Builder
		var mu sync.Mutex
		r := newRig(t, func(o *Options) {
			o.Adapter = voiceAdapter{o.Adapter.(*fakeAdapter)}
			o.VoiceMode = VoiceBoth
			o.Logger = slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &mu}, nil))
			o.Voiced = func(string) bool { return true }
			o.Voice = func(ctx context.Context, _, text, _ string) ([]byte, error) {
				took := time.Second
				if text == "a long answer" {
					took = time.Minute // a slow synthesis (GPT-SoVITS, a long text)
				}
				select {
				case <-time.After(took):
					return []byte("AUDIO:" + text), nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
		})
		defer r.stop()
		r.out.push("t:private:7", "k1", "a long answer")
		synctest.Wait()
		r.out.push("t:private:7", "k2", "and more")
		time.Sleep(10 * time.Second) // the reply pause between the two, and the second voice
		want := []string{"t:private:7 a long answer", "t:private:7 and more", "t:private:7 <voice AUDIO:and more>"}
		if got := r.ad.sentSoFar(); !slices.Equal(got, want) {
			t.Fatalf("after 10 s: sent %q, want %q", got, want)
		}
		time.Sleep(2 * time.Minute)
		if got := r.ad.sentSoFar(); len(got) != 3 {
			t.Errorf("the late voice was sent after the next reply: %q", got)
		}
		mu.Lock()
		defer mu.Unlock()
		if !strings.Contains(logs.String(), "voice message is dropped") {
			t.Errorf("the dropped voice is not logged: %s", logs.String())
		}
	})
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
