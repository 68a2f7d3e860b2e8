package tools

import (
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/packets"
)

// A call whose arguments cannot be read gets one instruction: it did not
// run, try once more with an object or answer without it — never "call
// again" and "do not retry" together.
func TestUnreadableArgumentsOneInstruction(t *testing.T) {
	_, err := argsObject([]byte(`text: x`))
	if err == nil {
		t.Fatal("unreadable arguments were read")
	}
	o := Outcome{Tool: "remember", Decision: packets.Deny, Rule: argsRule + err.Error()}
	text := o.Text()
	if strings.Contains(strings.ToLower(text), "do not retry") || !strings.Contains(text, "once more") || !strings.HasPrefix(text, "error: remember did not run") {
		t.Errorf("text = %q", text)
	}
}
