package cmd

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/script"
)

// TestBuiltinScriptsPassCheck runs cyan script check on every built-in
// script, by name, as a user would.
func TestBuiltinScriptsPassCheck(t *testing.T) {
	names := script.BuiltinNames()
	if len(names) < 11 {
		t.Fatalf("built-in scripts: %v", names)
	}
	var out, errb bytes.Buffer
	dir := t.TempDir()
	env := func(k string) string { return map[string]string{"CYAN_DATA_DIR": dir}[k] }
	code := Main(append([]string{"script", "check"}, names...), IO{Stdout: &out, Stderr: &errb, Env: env})
	if code != 0 || errb.Len() != 0 {
		t.Fatalf("cyan script check: exit %d\n%s", code, errb.String())
	}
	for _, n := range names {
		if !strings.Contains(out.String(), n+": ok — script "+n+";") {
			t.Errorf("%s not checked:\n%s", n, out.String())
		}
	}
}
