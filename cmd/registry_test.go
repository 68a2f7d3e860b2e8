package cmd

import (
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/registry"
)

// TestHelpListsTheRegisteredPlatformsAndVoices: the help names no
// platform or voice by hand; it lists what registered, each with its line.
func TestHelpListsTheRegisteredPlatformsAndVoices(t *testing.T) {
	rc, out, errb := runCmd(nil, "help", "bridges")
	if rc != 0 {
		t.Fatalf("help bridges: %d %s", rc, errb)
	}
	for _, p := range registry.Platforms() {
		if !strings.Contains(out, "bridges."+p.Key) || !strings.Contains(out, p.About) {
			t.Errorf("help bridges lacks platform %s:\n%s", p.Key, out)
		}
	}
	rc, out, errb = runCmd(nil, "help", "config")
	if rc != 0 {
		t.Fatalf("help config: %d %s", rc, errb)
	}
	for _, v := range registry.Voices() {
		if !strings.Contains(out, v.Name()) || !strings.Contains(out, v.About()) {
			t.Errorf("help config lacks voice %s:\n%s", v.Name(), out)
		}
	}
	if len(registry.Platforms()) < 2 || len(registry.Voices()) < 4 {
		t.Errorf("the build registers %v and %v", registry.PlatformKeys(), registry.VoiceNames())
	}
}
