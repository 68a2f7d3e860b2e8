package tts

import (
	"fmt"
	"strings"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/registry"
)

// Kind is a voice provider as it declares itself, in the file that
// implements it: its init calls registry.RegisterVoice with it, and
// nothing else in cyan names the provider — config checks the tts:
// section through it (config.VoiceSettings: its defaults, the keys only
// it reads, the formats it gives), the daemon and `cyan say` build it
// (Make), `cyan doctor` asks it where it speaks from (Ready) and what to
// do about a failed synthesis (Fix).
//
// Adding a voice: a file (or a package, imported once where the daemon
// lists its parts) with a Provider and a Kind, registered from its init.
type Kind interface {
	config.VoiceSettings
	// Make builds the provider from the tts: section (checked).
	Make(c config.TTS) (Provider, error)
	// Ready says, without speaking, where the voice speaks from (the
	// program it runs, the server it calls), or why it cannot speak at
	// all (a program missing: an *Error that is Unavailable; ErrOff).
	Ready(c config.TTS, p Provider) (where string, err error)
	// Fix says what the user can do about err, a failed synthesis; ""
	// when it knows nothing better than to correct the tts: section.
	Fix(c config.TTS, err error) string
}

// KindOf is the registered voice provider of that name ("" is espeak-ng).
func KindOf(name string) (Kind, error) {
	if name == "" {
		name = "espeak-ng"
	}
	v, ok := registry.VoiceOf(name)
	if !ok {
		return nil, fmt.Errorf("tts: unknown provider %q; use one of %s", name, strings.Join(registry.VoiceNames(), ", "))
	}
	k, ok := v.(Kind)
	if !ok {
		return nil, fmt.Errorf("tts: the voice %q is registered but is no tts.Kind", name)
	}
	return k, nil
}

// Ready says where the configured voice speaks from, or why it cannot
// (Kind.Ready); ErrOff when the voice is off.
func Ready(c config.TTS, p Provider) (string, error) {
	k, err := KindOf(c.Provider)
	if err != nil {
		return "", err
	}
	return k.Ready(c, p)
}

// Fix says what to do about a failed synthesis of the configured voice.
func Fix(c config.TTS, err error) string {
	k, kerr := KindOf(c.Provider)
	if kerr != nil {
		return ""
	}
	return k.Fix(c, err)
}

// checkFormat reports a tts.format the provider cannot give.
func checkFormat(t *config.TTS, bad registry.Fault, formats ...string) {
	for _, f := range formats {
		if t.Format == f {
			return
		}
	}
	bad("tts.format", "%q is not one of %s", t.Format, strings.Join(formats, ", "))
}

// serverFix is the fix for a voice server that does not answer.
func serverFix(c config.TTS, err error, how string) string {
	if !Unavailable(err) || c.BaseURL == "" {
		return ""
	}
	return fmt.Sprintf("start the %s server at %s%s, or correct tts.base_url", c.Provider, c.BaseURL, how)
}
