package llm

import (
	"strings"
	"testing"
)

func TestIgnored(t *testing.T) {
	oa, _ := New(Options{BaseURL: "http://127.0.0.1:1/v1", Model: "m", ThinkOff: "none"})
	local, _ := New(Options{BaseURL: "http://127.0.0.1:1/v1", Model: "m"})
	hosted, _ := New(Options{BaseURL: "https://api.openai.com/v1", Model: "m"})
	an, _ := New(Options{Provider: "anthropic", Model: "m"})
	temp := 0.3
	tests := []struct {
		name string
		c    Client
		req  Request
		want []string
	}{
		{"openai think off", oa, Request{Think: ThinkOff}, []string{"think: false"}},
		{"local server think off", local, Request{Think: ThinkOff}, nil},
		{"hosted think off", hosted, Request{Think: ThinkOff}, []string{"think: false"}},
		{"openai fine", oa, Request{Think: ThinkHigh, ResponseFormat: &ResponseFormat{}, Temperature: &temp}, nil},
		{"anthropic schema", an, Request{ResponseFormat: &ResponseFormat{}}, []string{"no JSON-schema output mode"}},
		{"anthropic temperature while thinking", an, Request{Think: ThinkOn, Temperature: &temp}, []string{"temperature is dropped"}},
		{"anthropic fine", an, Request{Think: ThinkOff, Temperature: &temp}, nil},
		{"not ours", nil, Request{Think: ThinkOff}, nil},
	}
	for _, tt := range tests {
		got := Ignored(tt.c, tt.req)
		if len(got) != len(tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
			continue
		}
		for i := range got {
			if !strings.Contains(got[i], tt.want[i]) {
				t.Errorf("%s: %q lacks %q", tt.name, got[i], tt.want[i])
			}
		}
	}
}
