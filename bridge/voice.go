package bridge

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// What a voiced chat gets (tts.bridge_mode).
const (
	VoiceBoth = "both"  // the text, then the voice message
	VoiceOnly = "voice" // the voice message instead of the text; the text when the voice fails
	VoiceText = "text"  // the text only
)

// voiceTimeout bounds one voice message's synthesis and encoding: the
// chat's later answers wait for it.
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
	vkey := key + "#voice"
	if id, ok := b.keys.Sent(vkey); ok {
		return id, nil
	}
	text := spoken(out)
	if text == "" {
		return "", errors.New("nothing to say")
	}
	format := b.adapter.(VoiceSender).VoiceFormat()
	vctx, cancel := context.WithTimeout(ctx, voiceTimeout)
	audio, err := b.voice(vctx, chat.Channel(b.name), text, format)
	cancel()
	if err != nil {
		return "", fmt.Errorf("the voice could not be made: %w", err)
	}
	if len(audio) == 0 {
		return "", errors.New("the voice could not be made: no audio")
	}
	id, err := b.send(ctx, chat, Outgoing{Parts: []OutPart{{Kind: PartVoice, Text: text, Audio: audio}}})
	var se *SendError
	if errors.As(err, &se) && se.Unknown {
		// taken, never confirmed: not sent again
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
	if kerr := b.keys.MarkSent(vkey, id); kerr != nil {
		b.log.Warn("could not keep a voice message's key; a restart would send it again", "key", vkey, "err", kerr)
	}
	return id, nil
}

// followVoice sends the voice of an answer whose text was sent
// (VoiceBoth). A failure is logged: the text is there already.
func (b *Bridge) followVoice(ctx context.Context, chat Chat, key string, out Outgoing) {
	if _, err := b.sendVoice(ctx, chat, key, out); err != nil && ctx.Err() == nil {
		b.log.Warn("the reply's voice message was not sent; the text was", "channel", chat.Channel(b.name), "key", key, "err", err)
	}
}

// voiceInstead sends out as a voice message only (VoiceOnly); when the
// voice cannot be made or sent, the text goes instead. A mute is the
// chat's, and is returned as it is.
func (b *Bridge) voiceInstead(ctx context.Context, chat Chat, key string, out Outgoing, progress *int) (string, error) {
	id, err := b.sendVoice(ctx, chat, key, out)
	if err == nil {
		*progress++
		return id, nil
	}
	var se *SendError
	if ctx.Err() != nil || (errors.As(err, &se) && se.Muted) {
		return "", err
	}
	b.log.Warn("the reply's voice message was not sent; sending the text", "channel", chat.Channel(b.name), "key", key, "err", err)
	return b.sendPieces(ctx, chat, key, out, b.limit, 0, progress)
}
