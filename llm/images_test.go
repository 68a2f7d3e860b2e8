package llm_test

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/llm"
)

// Images travel as OpenAI image_url data URLs and Anthropic base64 image
// blocks; the fake decodes both as the real APIs read them.
func TestImagesReachBothProviders(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nfake-pixels")
	for _, provider := range []string{"openai", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			fake := new(llmtest.Server)
			srv := httptest.NewServer(fake)
			defer srv.Close()
			base := srv.URL + "/v1"
			if provider == "anthropic" {
				base = srv.URL
			}
			c, err := llm.New(llm.Options{Provider: provider, BaseURL: base, Model: "m", APIKey: "k", MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Chat(context.Background(), llm.Request{MaxTokens: 100, Messages: []llm.Message{
				{Role: llm.RoleSystem, Content: "sys"},
				{Role: llm.RoleUser, Content: "^amy: what is this? %[images/qq/ab.png]", Images: []llm.Image{{MIME: "image/png", Data: png}}},
			}})
			if err != nil {
				t.Fatal(err)
			}
			req := fake.Requests()[0]
			var user llm.Message
			for _, m := range req.Messages {
				if m.Role == llm.RoleUser {
					user = m
				}
			}
			if len(user.Images) != 1 || !bytes.Equal(user.Images[0].Data, png) || user.Images[0].MIME != "image/png" || !strings.Contains(user.Content, "what is this?") {
				t.Errorf("the fake read %+v", user)
			}
			if provider == "openai" && !strings.Contains(string(req.Body), `"type":"image_url"`) {
				t.Errorf("body: %s", req.Body)
			}
			if provider == "anthropic" && !strings.Contains(string(req.Body), `"type":"image","source":{"type":"base64","media_type":"image/png"`) {
				t.Errorf("body: %s", req.Body)
			}
		})
	}
}
