package cmd

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/config"
)

func TestDoctorSaysWhichSandbox(t *testing.T) {
	cfg := config.Defaults()
	cfg.DataDir = t.TempDir()
	cfg.Tools.Roots = []string{t.TempDir()}
	cfg.Tools.Terminal.Sandbox = "off"
	if c := checkSandbox(&cfg); !c.warn || !strings.Contains(c.msg, "unconfined") || c.fix == "" {
		t.Fatalf("off: %+v", c)
	}
	cfg.Tools.Terminal.Sandbox = ""
	c := checkSandbox(&cfg)
	if _, err := exec.LookPath("bwrap"); err != nil && os.Getenv("CYAN_REQUIRE_TOOLS") != "1" {
		if !c.warn || !strings.Contains(c.msg, "will not run") || !strings.Contains(c.fix, "bubblewrap") {
			t.Fatalf("without bwrap: %+v", c)
		}
		return
	}
	if !c.ok || c.warn || !strings.Contains(c.msg, "bwrap") {
		t.Fatalf("with bwrap: %+v", c)
	}
	cfg.Tools.Roots = []string{"/nonexistent/folder"}
	if c := checkSandbox(&cfg); c.ok {
		t.Fatalf("missing root: %+v", c)
	}
}

func TestDoctorWarnsAboutRoot(t *testing.T) {
	c := checkUser()
	if root := os.Geteuid() == 0; c.warn != root || (root && !strings.Contains(c.msg, "root")) {
		t.Fatalf("uid %d: %+v", os.Geteuid(), c)
	}
}
