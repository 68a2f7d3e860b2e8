package registry

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Fault reports one fault of the configuration: the dotted key
// ("bridges.onebot[0].url") and what is wrong with it, saying what would
// be accepted.
type Fault func(key, format string, args ...any)

// Section is one platform's part of the configuration, under
// bridges.<key>: the platform's instances, decoded from YAML into the value
// Platform.New returns (a pointer whose fields carry yaml tags).
type Section interface {
	// Names are the instances' names, in the order configured; each is a
	// bridge's name, the prefix of its chats' channels ("qq:group:123").
	Names() []string
	// Validate fills the defaults of the instances and reports each fault
	// under key, the section's own key ("bridges.onebot"). The names'
	// syntax and uniqueness are checked by config, across platforms.
	Validate(key string, bad Fault)
	// Redacted is a copy whose secrets are masked with mask, to print.
	Redacted(mask func(string) string) Section
}

// Platform is a chat platform as it declares itself.
type Platform struct {
	// Key is the platform's section, bridges.<Key> (onebot, telegram); a
	// contract with every configuration file, never renamed.
	Key string
	// About is its line in the help ("QQ through OneBot v11 …").
	About string
	// New returns an empty section, ready to decode into.
	New func() Section
}

// Voice is a voice provider as it declares itself: the value of
// tts.provider that chooses it, and its line in the help. The layers
// above assert their own interfaces on it (config.VoiceSettings,
// tts.Kind).
type Voice interface {
	Name() string
	About() string
}

var (
	mu        sync.RWMutex
	platforms = map[string]Platform{}
	voices    = map[string]Voice{}
	key       = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)
)

// RegisterPlatform adds a platform; call it from the platform package's
// init. It panics on a bad or repeated key, or a missing New.
func RegisterPlatform(p Platform) {
	mu.Lock()
	defer mu.Unlock()
	switch {
	case !key.MatchString(p.Key):
		panic(fmt.Sprintf("registry: %q is not a platform key (1–32 lower-case letters, digits, - or _)", p.Key))
	case p.New == nil:
		panic(fmt.Sprintf("registry: platform %s has no New", p.Key))
	case platforms[p.Key].Key != "":
		panic(fmt.Sprintf("registry: platform %s registered twice", p.Key))
	}
	platforms[p.Key] = p
}

// RegisterVoice adds a voice provider; call it from its init. It panics
// on an empty or repeated name.
func RegisterVoice(v Voice) {
	mu.Lock()
	defer mu.Unlock()
	switch n := v.Name(); {
	case n == "":
		panic("registry: a voice without a name")
	case voices[n] != nil:
		panic(fmt.Sprintf("registry: voice %s registered twice", n))
	default:
		voices[n] = v
	}
}

// Platforms lists the registered platforms, by key.
func Platforms() []Platform {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]Platform, 0, len(platforms))
	for _, p := range platforms {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b Platform) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// PlatformOf finds a platform by its key.
func PlatformOf(key string) (Platform, bool) {
	mu.RLock()
	defer mu.RUnlock()
	p, ok := platforms[key]
	return p, ok
}

// Voices lists the registered voice providers, by name.
func Voices() []Voice {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]Voice, 0, len(voices))
	for _, v := range voices {
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b Voice) int { return strings.Compare(a.Name(), b.Name()) })
	return out
}

// VoiceOf finds a voice provider by its name (tts.provider).
func VoiceOf(name string) (Voice, bool) {
	mu.RLock()
	defer mu.RUnlock()
	v, ok := voices[name]
	return v, ok
}

// VoiceNames are the registered voices' names, by name.
func VoiceNames() []string {
	var out []string
	for _, v := range Voices() {
		out = append(out, v.Name())
	}
	return out
}

// PlatformKeys are the registered platforms' keys, by key.
func PlatformKeys() []string {
	var out []string
	for _, p := range Platforms() {
		out = append(out, p.Key)
	}
	return out
}
