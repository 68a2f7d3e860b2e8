package tools

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/cyan-agent/cyan/packets"
)

func BenchmarkCheck(b *testing.B) {
	r := tableRegistry(b, nil, nil)
	args := json.RawMessage(`{"command":"ls -la; echo $(id) | grep x && cat a.txt"}`)
	c := guestCallers[0]
	b.ReportAllocs()
	for b.Loop() {
		r.Check(c, "terminal", args)
	}
}

func BenchmarkOffer100Tools(b *testing.B) {
	r := tableRegistry(b, nil, nil)
	for i := range 86 {
		must(b, r.Register(packets.Tool{ToolSpec: packets.ToolSpec{Name: fmt.Sprintf("extra_%d", i), Description: "d", Kind: packets.ToolProcess, Effects: []string{packets.EffectNetwork}}, Run: nop}))
	}
	b.ReportAllocs()
	for b.Loop() {
		r.Offer(guestCallers[0])
	}
}

func BenchmarkSplitCommand(b *testing.B) {
	cmd := `cd /w && ls -la | grep "$(whoami)" ; (sleep 1 &) && echo 'a;b' > out.txt 2>&1`
	b.ReportAllocs()
	for b.Loop() {
		_, _ = SplitCommand(cmd)
	}
}

func BenchmarkOpenRead(b *testing.B) {
	f := newFixture(b)
	b.ReportAllocs()
	for b.Loop() {
		file, _, err := f.paths.OpenRead("sub/b.txt")
		if err != nil {
			b.Fatal(err)
		}
		file.Close()
	}
}
