package api

import (
	"testing"

	"github.com/cyan-agent/cyan/llm"
)

// POST /api/v1/llm/check checks the daemon's own model client.
func TestLLMCheckUsesTheDaemonsClient(t *testing.T) {
	r := newRig(t, nil)
	client, err := llm.New(llm.Options{BaseURL: r.fakeURL + "/v1", Model: "fake-model", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	r2 := newRig(t, func(o *Options) { o.LLM, o.LLMModel = client, "fake-model" })
	code, out := r2.do(t, "POST", "/api/v1/llm/check", "")
	if code != 200 || out["answered"] != true || out["model"] != "fake-model" || out["listed"] != true {
		t.Fatalf("%d %v", code, out)
	}
	if code, _ := r.do(t, "POST", "/api/v1/llm/check", ""); code != 404 {
		t.Errorf("without a client: %d", code)
	}
}
