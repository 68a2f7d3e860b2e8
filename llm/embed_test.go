package llm_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/internal/embedtest"
	"github.com/cyan-agent/cyan/llm"
)

func newEmbedder(t *testing.T, provider, base, model string, slept *[]time.Duration) llm.Embedder {
	t.Helper()
	e, err := llm.NewEmbedder(llm.EmbedOptions{Provider: provider, BaseURL: base, Model: model,
		Sleep: func(_ context.Context, d time.Duration) error { *slept = append(*slept, d); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestEmbedSpeaksBothProtocols(t *testing.T) {
	for _, c := range []struct{ provider, suffix, path string }{
		{"ollama", "", "/api/embed"},
		{"ollama", "/v1", "/api/embed"}, // a chat base URL is accepted
		{"openai", "/v1", "/v1/embeddings"},
	} {
		t.Run(c.provider+c.suffix, func(t *testing.T) {
			fake := &embedtest.Server{}
			srv := httptest.NewServer(fake)
			defer srv.Close()
			var slept []time.Duration
			e := newEmbedder(t, c.provider, srv.URL+c.suffix, "nomic-embed-text", &slept)
			texts := []string{"the exam schedule", "cherry trees in the park"}
			r, err := e.Embed(context.Background(), llm.EmbedRequest{Input: texts})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Vectors) != 2 || !slices.Equal(r.Vectors[1], fake.Vector(texts[1])) {
				t.Fatalf("vectors %v", r.Vectors)
			}
			if r.Usage.InputTokens != 8 || r.Model != "nomic-embed-text" {
				t.Errorf("usage %+v model %q", r.Usage, r.Model)
			}
			reqs := fake.Requests()
			if len(reqs) != 1 || reqs[0].Path != c.path || reqs[0].Model != "nomic-embed-text" {
				t.Errorf("requests %+v", reqs)
			}
		})
	}
}

func TestEmbedRetriesAndFailsClearly(t *testing.T) {
	fake := &embedtest.Server{}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	var slept []time.Duration
	e := newEmbedder(t, "ollama", srv.URL, "nomic-embed-text", &slept)
	ctx := context.Background()

	// A server error is retried (with the injected sleep), then answers.
	fake.Fail(http.StatusInternalServerError, http.StatusServiceUnavailable)
	if _, err := e.Embed(ctx, llm.EmbedRequest{Input: []string{"hello"}}); err != nil {
		t.Fatalf("after two 5xx: %v", err)
	}
	if len(slept) != 2 {
		t.Errorf("slept %v, want two backoffs", slept)
	}
	// Retries run out: the error is a Server error.
	fake.Fail(500, 500, 500)
	if _, err := e.Embed(ctx, llm.EmbedRequest{Input: []string{"hello"}}); llm.KindOf(err) != llm.Server {
		t.Errorf("three 500s: %v (kind %q)", err, llm.KindOf(err))
	}
	// A model the server does not have is not retried.
	n := len(fake.Requests())
	if _, err := e.Embed(ctx, llm.EmbedRequest{Model: "bge-m3", Input: []string{"hello"}}); llm.KindOf(err) != llm.ModelNotFound {
		t.Errorf("missing model: %v (kind %q)", err, llm.KindOf(err))
	}
	if len(fake.Requests()) != n+1 {
		t.Errorf("a missing model was retried")
	}
	// Nobody listening.
	srv.Close()
	if _, err := e.Embed(ctx, llm.EmbedRequest{Input: []string{"hello"}}); llm.KindOf(err) != llm.Unreachable {
		t.Errorf("closed server: %v (kind %q)", err, llm.KindOf(err))
	}
}

func TestEmbedRejectsABadAnswer(t *testing.T) {
	for name, body := range map[string]string{
		"too few vectors":   `{"embeddings": [[1, 0]]}`,
		"empty vector":      `{"embeddings": [[1, 0], []]}`,
		"mixed dimensions":  `{"embeddings": [[1, 0], [1, 0, 0]]}`,
		"not json":          `<html>`,
		"openai-shaped bad": `{"data": "x"}`,
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(body))
			}))
			defer srv.Close()
			var slept []time.Duration
			e := newEmbedder(t, "ollama", srv.URL, "m", &slept)
			if _, err := e.Embed(context.Background(), llm.EmbedRequest{Input: []string{"a", "b"}}); llm.KindOf(err) != llm.BadResponse {
				t.Errorf("%v (kind %q)", err, llm.KindOf(err))
			}
		})
	}
}

func TestNewEmbedderNeedsWhatItCannotGuess(t *testing.T) {
	for _, o := range []llm.EmbedOptions{
		{Provider: "anthropic", Model: "m"},
		{Provider: "ollama"},
		{Provider: "openai", BaseURL: "ftp://x", Model: "m"},
	} {
		if _, err := llm.NewEmbedder(o); llm.KindOf(err) != llm.Config {
			t.Errorf("%+v: %v", o, err)
		}
	}
}

// Ollama's 400 for a text whose vector came out NaN is not retried, and
// its advice names the embed settings, not the chat model's.
func TestEmbedRefusalNamesTheEmbedSettings(t *testing.T) {
	fake := &embedtest.Server{Poison: func(string) bool { return true }}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	var slept []time.Duration
	e := newEmbedder(t, "ollama", srv.URL, "bge-m3", &slept)
	fake.Models = []string{"bge-m3"}
	_, err := e.Embed(context.Background(), llm.EmbedRequest{Input: []string{"Bitcoin: A Peer-to-Peer Electronic Cash System"}})
	if llm.KindOf(err) != llm.BadRequest || len(slept) != 0 || len(fake.Requests()) != 1 {
		t.Fatalf("kind %q after %d tries: %v", llm.KindOf(err), len(fake.Requests()), err)
	}
	if msg := err.Error(); !strings.Contains(msg, "embedding contains NaN or Inf values") || !strings.Contains(msg, "embed.model") || strings.Contains(msg, "CYAN_LLM_MODEL") {
		t.Errorf("message %q", msg)
	}
}
