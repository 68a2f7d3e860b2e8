package daemon

import (
	"context"
	"errors"
	"log/slog"
	"strings"

	"github.com/cyan-agent/cyan/api"
	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/journal"
	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/tools"
	"github.com/cyan-agent/cyan/tts"
)

// VoiceSegmentsVar is the persona variable that chooses how replies are
// cut for the voice: "speak" runs the speak prompt script on each message
// (a model call, emotions by meaning); anything else, the rule splitter.
const VoiceSegmentsVar = "voice_segments"

// EmotionWordsVar is the persona variable with its emotion words for the
// voice's rule splitter: {emotion: [word, …]} (or a comma-separated string
// per emotion).
const EmotionWordsVar = "emotion_words"

// emotionWords reads the persona's emotion_words variable.
func emotionWords(v any) map[string][]string {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	out := map[string][]string{}
	for emo, ws := range m {
		switch ws := ws.(type) {
		case string:
			for _, w := range strings.Split(ws, ",") {
				if w = strings.TrimSpace(w); w != "" {
					out[emo] = append(out[emo], w)
				}
			}
		case []any:
			for _, w := range ws {
				if w, ok := w.(string); ok && strings.TrimSpace(w) != "" {
					out[emo] = append(out[emo], strings.TrimSpace(w))
				}
			}
		}
	}
	return out
}

// buildVoice makes the voice of the voiced channels: its speech goes to
// the stream as "speech" events. A voice that cannot speak (espeak-ng
// missing, a server down) is logged, and replies stay text.
func (d *Daemon) buildVoice(c config.TTS, log *slog.Logger) error {
	p, err := tts.New(c)
	if err != nil {
		return err
	}
	d.voice, err = tts.NewVoice(tts.Options{
		Provider: p, Cache: tts.NewCache(c.CacheMB << 20), Channels: c.Channels,
		Emit:    func(sp tts.Speech) { d.store.Journal().Post(journal.New(journal.VoiceSpeech, sp.Channel, sp)) },
		Timeout: c.TimeoutDuration(), Logger: log, Actions: c.Actions, Narrator: c.Narrator,
		Words:    func() map[string][]string { return emotionWords(d.persona.Load().Vars[EmotionWordsVar]) },
		Scripted: func() bool { return d.persona.Load().Vars[VoiceSegmentsVar] == "speak" },
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
	return api.PersonaInfo{Name: p.Name, Color: color, Dir: p.Dir}
}

// runVoice holds the voice until the daemon stops, then stops its
// syntheses.
func (d *Daemon) runVoice(ctx context.Context) error {
	<-ctx.Done()
	d.voice.Close()
	return nil
}
