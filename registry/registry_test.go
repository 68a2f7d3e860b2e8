package registry

import (
	"slices"
	"strings"
	"testing"
)

type section []string

func (s *section) Names() []string                      { return *s }
func (s *section) Validate(string, Fault)               {}
func (s *section) Redacted(func(string) string) Section { return s }

type voice string

func (v voice) Name() string  { return string(v) }
func (v voice) About() string { return "a voice of the tests" }

func panics(t *testing.T, want string, f func()) {
	t.Helper()
	defer func() {
		r, _ := recover().(string)
		if !strings.Contains(r, want) {
			t.Errorf("panic %q, want one with %q", r, want)
		}
	}()
	f()
}

// Registrations are listed by name, found by name, and a second
// registration of a name (or a bad one) panics as sql.Register does.
func TestRegisterListsFindsAndRefusesTwice(t *testing.T) {
	newSection := func() Section { return new(section) }
	RegisterPlatform(Platform{Key: "zz-test", About: "z", New: newSection})
	RegisterPlatform(Platform{Key: "aa-test", About: "a", New: newSection})
	RegisterVoice(voice("zz-voice"))
	RegisterVoice(voice("aa-voice"))
	if keys := PlatformKeys(); !slices.IsSorted(keys) || !slices.Contains(keys, "aa-test") || !slices.Contains(keys, "zz-test") {
		t.Errorf("platform keys %v", keys)
	}
	if names := VoiceNames(); !slices.IsSorted(names) || !slices.Contains(names, "aa-voice") {
		t.Errorf("voice names %v", names)
	}
	if p, ok := PlatformOf("aa-test"); !ok || p.About != "a" {
		t.Errorf("PlatformOf = %+v %v", p, ok)
	}
	if _, ok := PlatformOf("nope"); ok {
		t.Error("an unregistered platform was found")
	}
	if v, ok := VoiceOf("zz-voice"); !ok || v.Name() != "zz-voice" {
		t.Errorf("VoiceOf = %v %v", v, ok)
	}
	panics(t, "registered twice", func() { RegisterPlatform(Platform{Key: "aa-test", New: newSection}) })
	panics(t, "registered twice", func() { RegisterVoice(voice("aa-voice")) })
	panics(t, "not a platform key", func() { RegisterPlatform(Platform{Key: "Bad Key", New: newSection}) })
	panics(t, "has no New", func() { RegisterPlatform(Platform{Key: "no-new"}) })
	panics(t, "without a name", func() { RegisterVoice(voice("")) })
}
