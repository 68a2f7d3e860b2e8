package daemon

import (
	"context"
	"errors"
	"log/slog"

	"github.com/cyan-agent/cyan/api"
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
	return nil
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
