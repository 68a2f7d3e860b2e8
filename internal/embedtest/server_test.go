package embedtest

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestAnswersAsOllamaDoes checks the stand-in's answers against what
// Ollama's handlers (see the package doc) give for the same requests.
func TestAnswersAsOllamaDoes(t *testing.T) {
	s := &Server{Context: 4, Poison: func(t string) bool { return strings.Contains(t, "whitepaper") }}
	srv := httptest.NewServer(s)
	defer srv.Close()
	for _, c := range []struct {
		name, path, body string
		status           int
		want             string // in the body
	}{
		{"no body", "/api/embed", ``, 400, `{"error":"missing request body"}`},
		{"one string", "/api/embed", `{"model":"nomic-embed-text","input":"a b"}`, 200, `"prompt_eval_count":2`},
		{"empty string embeds nothing", "/api/embed", `{"model":"nomic-embed-text","input":""}`, 200, `"embeddings":[]`},
		{"null input embeds nothing", "/api/embed", `{"model":"nomic-embed-text"}`, 200, `"embeddings":[]`},
		{"a number in the list", "/api/embed", `{"model":"nomic-embed-text","input":["a",1]}`, 400, `{"error":"invalid input type"}`},
		{"an object", "/api/embed", `{"model":"nomic-embed-text","input":{"a":1}}`, 400, `{"error":"invalid input type"}`},
		{"not pulled", "/api/embed", `{"model":"bge-m3","input":"a"}`, 404, `model \"bge-m3\" not found, try pulling it first`},
		{"latest tag", "/api/embed", `{"model":"nomic-embed-text:latest","input":"a"}`, 200, `"model":"nomic-embed-text:latest"`},
		{"cut to the context", "/api/embed", `{"model":"nomic-embed-text","input":"a b c d e f"}`, 200, `"prompt_eval_count":4`},
		{"no truncation asked", "/api/embed", `{"model":"nomic-embed-text","input":"a b c d e f","truncate":false}`, 400, `{"error":"the input length exceeds the context length"}`},
		{"NaN", "/api/embed", `{"model":"nomic-embed-text","input":["fine","the whitepaper"]}`, 400, `{"error":"embedding contains NaN or Inf values"}`},
		{"openai empty string", "/v1/embeddings", `{"model":"nomic-embed-text","input":""}`, 200, `"index":0`},
		{"openai empty list", "/v1/embeddings", `{"model":"nomic-embed-text","input":[]}`, 400, `"message":"invalid input","param":null,"type":"invalid_request_error"`},
		{"openai null", "/v1/embeddings", `{"model":"nomic-embed-text"}`, 400, `"message":"invalid input"`},
		{"openai format", "/v1/embeddings", `{"model":"nomic-embed-text","input":"a","encoding_format":"int8"}`, 400, `Invalid value for 'encoding_format' = int8. Supported values: ['float', 'base64'].`},
		{"openai not pulled", "/v1/embeddings", `{"model":"bge-m3","input":"a"}`, 404, `"type":"not_found_error"`},
		{"openai NaN", "/v1/embeddings", `{"model":"nomic-embed-text","input":"whitepaper"}`, 400, `"message":"embedding contains NaN or Inf values"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, err := http.Post(srv.URL+c.path, "application/json", strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.status || !strings.Contains(string(b), c.want) {
				t.Errorf("%d %s; want %d with %s", resp.StatusCode, b, c.status, c.want)
			}
		})
	}
}

func TestDimensionsAndBase64(t *testing.T) {
	s := &Server{Dims: 16}
	srv := httptest.NewServer(s)
	defer srv.Close()
	post := func(path, body string, out any) {
		t.Helper()
		resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%d %v", resp.StatusCode, err)
		}
	}
	var o struct{ Embeddings [][]float32 }
	post("/api/embed", `{"model":"nomic-embed-text","input":"cherry trees in the park","dimensions":4}`, &o)
	if len(o.Embeddings) != 1 || len(o.Embeddings[0]) != 4 {
		t.Fatalf("dimensions: %v", o.Embeddings)
	}
	var n float64
	for _, x := range o.Embeddings[0] {
		n += float64(x * x)
	}
	if math.Abs(n-1) > 1e-5 {
		t.Errorf("cut vector has length² %g, want 1", n)
	}
	var l struct {
		Data []struct{ Embedding string }
	}
	post("/v1/embeddings", `{"model":"nomic-embed-text","input":["cherry trees"],"encoding_format":"base64"}`, &l)
	b, err := base64.StdEncoding.DecodeString(l.Data[0].Embedding)
	if err != nil || len(b) != 64 {
		t.Fatalf("base64 %d bytes, %v", len(b), err)
	}
	want := s.Vector("cherry trees")
	for i := range want {
		if got := math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])); got != want[i] {
			t.Fatalf("component %d: %g, want %g", i, got, want[i])
		}
	}
}

func TestBusyWhenTheQueueIsFull(t *testing.T) {
	s := &Server{MaxQueue: 1}
	arrived, release := s.Hold(2)
	srv := httptest.NewServer(s)
	defer srv.Close()
	done := make(chan int)
	go func() {
		resp, err := http.Post(srv.URL+"/api/embed", "application/json", strings.NewReader(`{"model":"nomic-embed-text","input":["a","b"]}`))
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	<-arrived
	resp, err := http.Post(srv.URL+"/api/embed", "application/json", strings.NewReader(`{"model":"nomic-embed-text","input":"c"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || !strings.Contains(string(b), "server busy, please try again.  maximum pending requests exceeded") {
		t.Errorf("second request: %d %s", resp.StatusCode, b)
	}
	release()
	if st := <-done; st != 200 {
		t.Errorf("held request: %d", st)
	}
}
