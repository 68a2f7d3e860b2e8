package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/cyan-agent/cyan/api"
	"github.com/cyan-agent/cyan/bridge"
	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/journal"
	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/persona"
	"github.com/cyan-agent/cyan/tools"
	"github.com/cyan-agent/cyan/tts"
)

// buildVoice makes the voice of the voiced channels: its speech goes to
// the stream as "speech" events. A voice that cannot speak (espeak-ng
// missing, a server down) is logged, and replies stay text.
func (d *Daemon) buildVoice(c config.TTS, log *slog.Logger) error {
	p, err := tts.New(c)
	if err != nil {
		return err
	}
	d.voice, err = tts.NewVoice(tts.Options{
		Provider: p, Cache: tts.NewCache(c.CacheMB << 20), Channels: persona.PageChannels(c.Channels),
		Emit:    func(sp tts.Speech) { d.store.Journal().Post(journal.New(journal.VoiceSpeech, sp.Channel, sp)) },
		Timeout: c.TimeoutDuration(), Logger: log, Actions: c.Actions, Narrator: c.Narrator,
		Words:    func() map[string][]string { return tts.EmotionWords(d.persona.Load().Vars[tts.EmotionWordsVar]) },
		Scripted: func() bool { return tts.Scripted(d.persona.Load().Vars) },
		Script: func(ctx context.Context, channel, text string) ([]packets.Segment, error) {
			var out struct {
				Speech []packets.Segment `json:"speech"`
			}
			err := d.scripts.Call(ctx, tools.ScriptSpeak, channel, map[string]any{"text": text}, &out)
			return out.Speech, err
		},
	})
	if err != nil {
		return err
	}
	if err := d.router.Unsubscribe(voiceSubscriber); err != nil {
		return err
	}
	if _, err := tts.Ready(c, p); err != nil && !errors.Is(err, tts.ErrOff) {
		log.Warn("replies in the voiced channels will be text only", "err", err, "fix", tts.Fix(c, err))
	}
	d.bridgeMode = c.BridgeMode
	if d.encoder.Name == "" {
		d.encoder = tts.FindEncoder()
	}
	if d.encoder.Name == "" && c.BridgeMode != bridge.VoiceText && voicesBridges(c.Channels) {
		log.Warn("no OGG/Opus encoder: voiced Telegram chats get text only", "err", tts.ErrNoEncoder)
	}
	return nil
}

// voicesBridges reports whether the channel patterns reach beyond the
// page.
func voicesBridges(patterns []string) bool {
	for _, p := range patterns {
		if p != persona.PageChannel && !strings.HasPrefix(p, persona.PageChannel+":") {
			return true
		}
	}
	return false
}

// voiceSubscriber was the voice's name at the router; the voice follows
// the journal instead (tts.Voice.Follow), and its old outbox is dropped.
const voiceSubscriber = "voice"

// personaInfo is what the page shows of the persona now.
func (d *Daemon) personaInfo() api.PersonaInfo {
	p := d.persona.Load()
	color := p.Color
	if color == "" {
		color = "#1D75B3"
	}
	return api.PersonaInfo{Name: p.Name, Color: color, Dir: p.Dir, ID: p.ID()}
}

// runVoice holds the voice until the daemon stops, then stops its
// syntheses.
func (d *Daemon) runVoice(ctx context.Context) error {
	<-ctx.Done()
	d.voice.Close()
	return nil
}

// bridgeVoiced reports whether a bridge's chat is voiced (tts.channels).
func (d *Daemon) bridgeVoiced(channel string) bool {
	return d.voice != nil && d.voice.Voiced(channel)
}

// bridgeVoice makes a bridge's voice message of a reply: its segments
// voiced in order and joined, in the format the platform takes — WAV (or
// MP3) for a OneBot record (another format made WAV by ffmpeg), OGG/Opus
// for Telegram, encoded by the encoder found at start unless the voice
// gave OGG/Opus.
func (d *Daemon) bridgeVoice(ctx context.Context, channel, text, format string) ([]byte, error) {
	if d.voice == nil {
		return nil, tts.ErrOff
	}
	segs := tts.Split(text)
	if len(segs) == 0 {
		return nil, errors.New("nothing to say")
	}
	clips, err := d.voice.Say(ctx, segs, "")
	if err != nil {
		return nil, err
	}
	audio := make([]tts.Audio, 0, len(clips))
	for _, c := range clips {
		if len(c.Audio.Data) > 0 {
			audio = append(audio, c.Audio)
		}
	}
	joined, err := tts.Join(audio)
	if err != nil {
		return nil, err
	}
	switch format {
	case "audio/ogg":
		if tts.IsOggOpus(joined.Data) {
			return joined.Data, nil
		}
		enc, err := d.encoder.Encode(ctx, joined)
		if err != nil {
			return nil, err
		}
		return enc.Data, nil
	case "audio/wav":
		if f := tts.Sniff(joined.Data); f == "wav" || f == "mp3" {
			return joined.Data, nil
		}
		// (an ogg or aac voice: Lagrange takes only WAV, MP3, SILK, AMR)
		wav, err := d.encoder.ToWAV(ctx, joined)
		if err != nil {
			return nil, err
		}
		return wav.Data, nil
	}
	return nil, fmt.Errorf("no voice messages in %s", format)
}
