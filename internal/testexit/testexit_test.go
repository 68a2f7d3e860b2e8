package testexit

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestAPassingRaceBinaryExitsAtOnce runs this test binary again as a
// child that exits through Exit: passing, it is gone in well under the
// race runtime's second; failing, its code is kept.
func TestAPassingRaceBinaryExitsAtOnce(t *testing.T) {
	if code := os.Getenv("TESTEXIT_CHILD"); code != "" {
		if code == "0" {
			Exit(0)
		}
		Exit(3)
	}
	for _, c := range []struct {
		code string
		want int
	}{{"0", 0}, {"3", 3}} {
		cmd := exec.Command(os.Args[0], "-test.run=TestAPassingRaceBinaryExitsAtOnce")
		cmd.Env = append(os.Environ(), "TESTEXIT_CHILD="+c.code)
		began := time.Now()
		err := cmd.Run()
		took := time.Since(began)
		got := 0
		if ee, ok := err.(*exec.ExitError); ok {
			got = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("exit %s: code %d", c.code, got)
		}
		t.Logf("exit %s took %s (race detector on: %v)", c.code, took, raceEnabled)
	}
}

func TestMain(m *testing.M) { Main(m) }
