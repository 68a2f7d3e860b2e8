package bridge

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

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
