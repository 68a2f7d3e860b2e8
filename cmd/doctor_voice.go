package cmd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/tts"
)

// checkVoice says whether the configured voice speaks, and how to fix it:
// a missing program names its package, a server that is down its URL. The
// voice is optional (replies stay text without it), so the default voice
// missing is a warning; a voice configured on purpose that fails is not.
func checkVoice(cfg *config.Config, timeout time.Duration) check {
	c := check{name: "voice"}
	t := cfg.TTS
	p, err := tts.New(t)
	if err != nil {
		c.msg = err.Error()
		c.fix = "correct the tts: section ('cyan config check' shows it)"
		return c
	}
	where, err := tts.Ready(t, p)
	switch {
	case errors.Is(err, tts.ErrOff):
		c.ok = true
		c.msg = "off (tts.provider: " + t.Provider + "); replies are text only"
		return c
	case err != nil:
		c.warn = true
		msg := err.Error()
		if e := (*tts.Error)(nil); errors.As(err, &e) {
			msg = e.Msg
		}
		c.msg = p.Name() + ": " + msg + "; the voiced channels get text only"
		c.fix = tts.Fix(t, err)
		return c
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	began := time.Now()
	clips, err := speakEach(ctx, t, "你好。Hello.")
	if err != nil {
		c.msg = fmt.Sprintf("%s does not speak: %v", where, err)
		if c.fix = tts.Fix(t, err); c.fix == "" {
			c.fix = "correct the tts: section, or set tts.provider: off"
		}
		neutralFails(ctx, p, t, err, &c)
		return c
	}
	size, formats := 0, []string{}
	for i, clip := range clips {
		f := tts.Sniff(clip.Data)
		if f == "" {
			c.msg = fmt.Sprintf("%s answered segment %d with %d bytes of %s that are no audio a page plays (wav, ogg, mp3, aac, flac)", where, i+1, len(clip.Data), clip.Type)
			c.fix = "set tts.format to wav or ogg, or check what the server sends"
			return c
		}
		size += len(clip.Data)
		if !slices.Contains(formats, f) {
			formats = append(formats, f)
		}
	}
	c.ok = true
	c.msg = fmt.Sprintf("%s speaks (%d segments, %d bytes of %s in %d ms); voiced channels: %v", where, len(clips), size, strings.Join(formats, ", "), time.Since(began).Milliseconds(), t.Channels)
	// Every configured reference is tried on its own: a missing one
	// falls back to the neutral voice at run time, so it is a warning.
	if g, ok := p.(*tts.GPTSoVITS); ok {
		var bad []string
		for _, emo := range g.References() {
			if err := g.TryReference(ctx, emo, "你好。"); err != nil {
				msg := err.Error()
				if e := (*tts.Error)(nil); errors.As(err, &e) {
					msg = e.Msg
				}
				bad = append(bad, fmt.Sprintf("%s (%s): %s", emo, t.Refs[emo].Audio, msg))
			}
		}
		if len(bad) > 0 {
			c.ok, c.warn = false, true
			c.msg += "; these references fail and fall back to the neutral voice: " + strings.Join(bad, "; ")
			c.fix = "put each reference file where tts.refs says, on the machine GPT-SoVITS runs on (the path is the server's)"
		}
	}
	return c
}

// neutralFails names GPT-SoVITS's neutral reference when it is what
// fails: every emotion falls back to it, so without it nothing is said.
func neutralFails(ctx context.Context, p tts.Provider, t config.TTS, err error, c *check) {
	g, ok := p.(*tts.GPTSoVITS)
	if !ok || tts.Unavailable(err) {
		return
	}
	emo := tts.DefaultEmotion
	if _, ok := t.Refs[emo]; !ok {
		return
	}
	if err := g.TryReference(ctx, emo, "你好。"); err == nil || tts.Unavailable(err) {
		return
	}
	c.msg += fmt.Sprintf("; the %s reference (%s) fails, and every emotion falls back to it", emo, t.Refs[emo].Audio)
	c.fix = fmt.Sprintf("put the file tts.refs.%s.audio names (%s) on the machine GPT-SoVITS runs on (the path is the server's), or point it at a clip the server has", emo, t.Refs[emo].Audio)
}

// speakEach voices text's segments one by one, as the page gets them (the
// page plays each clip; nothing is joined).
func speakEach(ctx context.Context, c config.TTS, text string) ([]tts.Clip, error) {
	p, err := tts.New(c)
	if err != nil {
		return nil, err
	}
	v, err := tts.NewVoice(tts.Options{Provider: p, Cache: tts.NewCache(0), Timeout: c.TimeoutDuration()})
	if err != nil {
		return nil, err
	}
	defer v.Close()
	return v.Say(ctx, tts.Split(text), "")
}

// checkVoiceEncoder says which program makes the bridges' OGG/Opus voice
// messages (Telegram's sendVoice), when a bridge chat is voiced: none
// found is a warning, since those chats then get text only. QQ's records
// are WAV and need no encoder.
func checkVoiceEncoder(cfg *config.Config) check {
	c := check{name: "voice messages", ok: true}
	t := cfg.TTS
	bridges := false
	for _, p := range t.Channels {
		if p != "desktop" && !strings.HasPrefix(p, "desktop:") {
			bridges = true
		}
	}
	if t.Provider == "off" || t.BridgeMode == "text" || !bridges {
		c.msg = "no bridge chat is voiced (tts.channels, tts.bridge_mode: " + t.BridgeMode + ")"
		return c
	}
	e := tts.FindEncoder()
	if e.Name == "" {
		c.ok, c.warn = false, true
		c.msg = "no OGG/Opus encoder (ffmpeg with libopus, or opusenc): voiced Telegram chats get text only"
		c.fix = "apt-get install ffmpeg opus-tools"
		return c
	}
	c.msg = fmt.Sprintf("voiced bridge chats get %s; OGG/Opus by %s (%s)", t.BridgeMode, e.Name, e.Path)
	return c
}
