package bridge

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"
)

// What a voiced chat gets (tts.bridge_mode).
const (
	VoiceBoth = "both"  // the text, then the voice message
	VoiceOnly = "voice" // the voice message instead of the text; the text when the voice fails
	VoiceText = "text"  // the text only
)

// voiceTimeout bounds one voice message's synthesis and encoding (in
// voice mode the chat's later answers wait for it).
const voiceTimeout = 90 * time.Second

// voicedChat reports whether the chat's replies are voiced and the
// adapter can send a voice.
func (b *Bridge) voicedChat(chat Chat) bool {
	if b.voiced == nil || b.voice == nil || b.voiceMode == VoiceText {
		return false
	}
	if _, ok := b.adapter.(VoiceSender); !ok {
		return false
	}
	return b.voiced(chat.Channel(b.name))
}

// spoken is what a voice says of out: its text, mentions by name, without
// the 「name: …」 quote of a reply.
func spoken(out Outgoing) string {
	var parts []string
	for _, p := range out.Parts {
		switch p.Kind {
		case PartText:
			parts = append(parts, p.Text)
		case PartMention:
			parts = append(parts, p.Text)
		}
	}
	return strings.TrimSpace(strings.Join(parts, " "))
}

// sendVoice makes and sends out's voice message under key+"#voice", once:
// a voice sent before a restart is not sent again. The outcome of a send
// the platform never confirmed is kept as sent.
func (b *Bridge) sendVoice(ctx context.Context, chat Chat, key string, out Outgoing) (string, error) {
	if id, ok := b.keys.Sent(key + "#voice"); ok {
		return id, nil
	}
	text, audio, err := b.makeVoice(ctx, chat, out)
	if err != nil {
		return "", err
	}
	return b.sendVoiceMessage(ctx, chat, key, text, audio)
}

// makeVoice makes out's voice message: what it says and its audio.
func (b *Bridge) makeVoice(ctx context.Context, chat Chat, out Outgoing) (string, []byte, error) {
	text := spoken(out)
	if text == "" {
		return "", nil, errors.New("nothing to say")
	}
	format := b.adapter.(VoiceSender).VoiceFormat()
	vctx, cancel := context.WithTimeout(ctx, voiceTimeout)
	audio, err := b.voice(vctx, chat.Channel(b.name), text, format)
	cancel()
	if err != nil {
		return "", nil, fmt.Errorf("the voice could not be made: %w", err)
	}
	if len(audio) == 0 {
		return "", nil, errors.New("the voice could not be made: no audio")
	}
	return text, audio, nil
}

// sendVoiceMessage sends a made voice message under key+"#voice", with
// its flight (sendFlown): one a crash cut is looked for first.
func (b *Bridge) sendVoiceMessage(ctx context.Context, chat Chat, key, text string, audio []byte) (string, error) {
	vkey := key + "#voice"
	id, err := b.sendFlown(ctx, chat, vkey, Outgoing{Parts: []OutPart{{Kind: PartVoice, Text: text, Audio: audio}}})
	var se *SendError
	if errors.As(err, &se) && se.Unknown {
		// taken, never confirmed: not sent again. In voice mode the voice
		// is the answer: its unknown outcome is the answer's, counted and
		// told like a text's; beside the text it is only logged.
		if b.voiceMode == VoiceOnly {
			b.unconfirmed(ctx, chat, vkey, Outgoing{Parts: []OutPart{{Kind: PartText, Text: text}}}, err)
			return "", nil
		}
		if kerr := b.keys.MarkSent(vkey, ""); kerr != nil {
			b.log.Warn("could not keep a voice message's key", "key", vkey, "err", kerr)
		}
		return "", nil
	}
	if err != nil {
		return "", err
	}
	b.sent_.Add(1)
	if id != "" {
		b.sent.add(string(chat.Kind) + ":" + chat.ID + ":" + id)
	}
	if kerr := b.keys.MarkSentIn(chat.Channel(b.name), vkey, id); kerr != nil {
		b.log.Warn("could not keep a voice message's key; a restart would send it again", "key", vkey, "err", kerr)
	}
	return id, nil
}

// voiceJob is the voice message of a chat's last sent reply, being made
// (VoiceBoth).
type voiceJob struct {
	key    string
	cancel context.CancelFunc
}

// followVoice makes and sends, in the background, the voice of an answer
// whose text was sent (VoiceBoth): the chat's next answers never wait for
// a synthesis (GPT-SoVITS takes seconds a sentence). A voice still being
// made when the chat's next answer is sent is too late, and dropped — the
// next one's voice is made instead — and the log says so. A failure is
// logged: the text is there already. A voice not sent when the daemon
// stops is not made again after the restart (its text was sent).
func (b *Bridge) followVoice(chat Chat, key string, out Outgoing) {
	if _, ok := b.keys.Sent(key + "#voice"); ok {
		return
	}
	channel := chat.Channel(b.name)
	b.mu.Lock()
	run := b.ctx
	ctx, cancel := context.WithCancel(run)
	job := &voiceJob{key: key, cancel: cancel}
	if old := b.voices[chat]; old != nil {
		old.cancel()
		b.log.Info("a reply's voice message is dropped: the chat's next reply was sent before it was made", "channel", channel, "key", old.key, "next", key)
	}
	b.voices[chat] = job
	b.wg.Add(1)
	b.mu.Unlock()
	go func() {
		defer b.wg.Done()
		defer cancel()
		defer func() {
			if v := recover(); v != nil { // a voice must not take the bridge down
				b.log.Error("bridge part panicked", "part", "voice message", "panic", v, "stack", string(debug.Stack()))
			}
		}()
		text, audio, err := b.makeVoice(ctx, chat, out)
		b.mu.Lock()
		current := b.voices[chat] == job
		if current {
			delete(b.voices, chat)
		}
		b.mu.Unlock()
		if !current || run.Err() != nil {
			return // dropped (logged above), or the bridge stops
		}
		if err == nil {
			_, err = b.sendVoiceMessage(run, chat, key, text, audio)
		}
		if err != nil && run.Err() == nil {
			b.log.Warn("the reply's voice message was not sent; the text was", "channel", channel, "key", key, "err", err)
		}
	}()
}

// voiceInstead sends out as a voice message only (VoiceOnly); when the
// voice cannot be made or sent, the text goes instead. A mute is the
// chat's, and is returned as it is.
func (b *Bridge) voiceInstead(ctx context.Context, chat Chat, key string, out Outgoing, o *offer) (string, error) {
	id, err := b.sendVoice(ctx, chat, key, out)
	if err == nil {
		o.progress++
		return id, nil
	}
	var se *SendError
	if ctx.Err() != nil || (errors.As(err, &se) && se.Muted) {
		return "", err
	}
	b.log.Warn("the reply's voice message was not sent; sending the text", "channel", chat.Channel(b.name), "key", key, "err", err)
	return b.sendPieces(ctx, chat, key, out, b.limit, 0, o)
}
