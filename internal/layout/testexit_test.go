package layout

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// endsThroughTestexit is a TestMain that ends through package testexit.
var endsThroughTestexit = regexp.MustCompile(`testexit\.(Main\(m\)|Exit\()`)

// TestEveryPackageEndsItsTestsThroughTestexit: every package with tests
// has a TestMain that exits through internal/testexit, so no passing race
// binary holds its place in go test for the race runtime's exit sleep
// (testexit's doc says why).
func TestEveryPackageEndsItsTestsThroughTestexit(t *testing.T) {
	root := repoRoot(t)
	tests := goFiles(t, root, true)
	if len(tests) < 40 {
		t.Fatalf("only %d packages with tests found", len(tests))
	}
	for dir, files := range tests {
		if dir == "internal/testexit" {
			continue
		}
		ends := false
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			ends = ends || strings.Contains(string(b), "func TestMain(") && endsThroughTestexit.Match(b)
		}
		if !ends {
			t.Errorf("%s: its tests should end through internal/testexit: add func TestMain(m *testing.M) { testexit.Main(m) }", dir)
		}
	}
}
