package tools

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestPidCapRefusesForksPastItsMax: inside the cap a program cannot have
// more processes than its max, however many it asks for, and the cap says
// it refused; the cgroup is gone afterwards.
func TestPidCapRefusesForksPastItsMax(t *testing.T) {
	c := newPidCap(8)
	if c == nil {
		if os.Getenv("CYAN_REQUIRE_TOOLS") == "1" {
			t.Fatal("no pids cgroup can be made here (CYAN_REQUIRE_TOOLS=1)")
		}
		t.Skip("no pids cgroup can be made here (not root, or no delegated pids controller)")
	}
	argv := c.wrap([]string{"/bin/sh", "-c", `n=0; for i in $(seq 30); do sleep 0.2 & n=$((n+1)); done; wait; echo started`})
	out, _ := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if !c.refused() {
		t.Fatalf("the cap refused no fork:\n%s", out)
	}
	if !strings.Contains(string(out), "fork") {
		t.Errorf("the program did not see a refused fork:\n%s", out)
	}
	if err := c.remove(); err != nil {
		t.Fatalf("remove: %v", err)
	}
	if _, err := os.Stat(c.dir); !os.IsNotExist(err) {
		t.Fatalf("the cgroup is still there: %v", err)
	}
}
