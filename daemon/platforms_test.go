package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/bridge"
	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/registry"
	"github.com/cyan-agent/cyan/supervise"
)

// loopPlatform is a platform declared the way bridge/<platform>/platform.go
// declares one, from a test: nothing of the daemon, config or the API
// names it, and it is built, supervised, mounted and classified all the
// same — adding a platform is its package and its import line.
func init() {
	registry.RegisterPlatform(registry.Platform{Key: "looptest", About: "a platform of the daemon's tests",
		New: func() registry.Section { return new(loopSection) }})
}

type loopSection []struct {
	Name    string          `yaml:"name"`
	Token   string          `yaml:"token" secret:"true"`
	Manners *config.Manners `yaml:"manners"`
}

var _ bridge.Platform = (*loopSection)(nil)

var errLoopRefused = errors.New("looptest: the platform refused the token")

func (s *loopSection) Names() []string {
	var out []string
	for _, c := range *s {
		out = append(out, c.Name)
	}
	return out
}

func (s *loopSection) Validate(key string, bad registry.Fault) {
	for i, c := range *s {
		if c.Token == "" {
			bad(fmt.Sprintf("%s[%d].token", key, i), "is empty")
		}
	}
}

func (s *loopSection) Redacted(mask func(string) string) registry.Section {
	out := append(loopSection(nil), *s...)
	for i := range out {
		out[i].Token = mask(out[i].Token)
	}
	return &out
}

func (s *loopSection) Build(env bridge.Env) (bridge.Built, error) {
	b := bridge.Built{Mount: map[string]http.Handler{}}
	for _, c := range *s {
		b.Instances = append(b.Instances, bridge.Instance{Name: c.Name, Adapter: loopAdapter{refused: c.Token == "refused"}, Manners: c.Manners})
		b.Mount["/looptest/"+c.Name] = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "looptest "+c.Name) })
	}
	return b, nil
}

func (s *loopSection) Doctor(context.Context, bridge.DoctorEnv) []bridge.Check { return nil }

func (s *loopSection) Permanent(err error) (string, bool) {
	if errors.Is(err, errLoopRefused) {
		return "give looptest a token it takes", true
	}
	return "", false
}

type loopAdapter struct{ refused bool }

func (loopAdapter) Platform() string { return "looptest" }
func (a loopAdapter) Run(ctx context.Context, sink bridge.Sink) error {
	if a.refused {
		return errLoopRefused
	}
	<-ctx.Done()
	return nil
}
func (loopAdapter) Send(context.Context, bridge.Chat, bridge.Outgoing) (string, error) {
	return "", bridge.ErrOffline
}
func (loopAdapter) Typing(context.Context, bridge.Chat) error { return bridge.ErrUnsupported }

// TestANewPlatformIsOnlyItsDeclaration: a platform registered from a test
// is a key of the configuration, its bridges are supervised router
// components, what it serves is mounted on the API's server behind its own
// credentials, and its permanent error stops its part with its fix.
func TestANewPlatformIsOnlyItsDeclaration(t *testing.T) {
	yaml := "bridges:\n  looptest:\n    - {name: la, token: good}\n    - {name: lb, token: refused}\n"
	r := newRig(t, map[string]string{"cyan.yaml": yaml})
	deadline := time.Now().Add(10 * time.Second)
	for {
		h := r.health()
		la, lb := h["bridge:la"], h["bridge:lb"]
		if la.State == supervise.Running && lb.State == supervise.Stopped {
			if !strings.Contains(lb.LastError, "give looptest a token it takes") || lb.Restarts != 0 {
				t.Fatalf("bridge:lb = %+v", lb)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("bridge:la %+v, bridge:lb %+v", la, lb)
		}
		time.Sleep(10 * time.Millisecond) // polling the supervisor
	}
	if c := r.components()["bridge:la"]; strings.Join(c.Channels, ",") != "la:*" {
		t.Errorf("component bridge:la = %+v", c)
	}
	resp, err := http.Get(r.base + "/looptest/la")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "looptest la" {
		t.Errorf("GET /looptest/la: %d %q (mounted, without the API token)", resp.StatusCode, body)
	}
}
