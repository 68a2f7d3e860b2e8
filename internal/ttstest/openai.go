package ttstest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
)

// SpeechRequest is an OpenAI create-speech request as the fake got it.
type SpeechRequest struct {
	Model          string   `json:"model"`
	Input          string   `json:"input"`
	Voice          string   `json:"voice"`
	ResponseFormat string   `json:"response_format"`
	Speed          *float64 `json:"speed"`
	Instructions   string   `json:"instructions"`
	Authorization  string   `json:"-"`
}

// OpenAISpeech is a fake of OpenAI's POST /v1/audio/speech. Its zero value
// is ready; serve it with httptest.NewServer.
//
// Like the real API: model, input and voice are required, input is at most
// 4096 characters, response_format is one of mp3, opus, aac, flac, wav,
// pcm (default mp3), speed 0.25–4; errors are {"error": {"message", "type":
// "invalid_request_error", "param", "code"}}; a wrong key is 401. Audio
// comes as wav (audio/wav) or pcm (24 kHz 16-bit mono, audio/pcm); the
// fake makes no compressed formats.
type OpenAISpeech struct {
	mu   sync.Mutex
	reqs []SpeechRequest
	// Key, when set, is required as "Authorization: Bearer <Key>".
	Key string
	// Voices, when set, are the only voices accepted.
	Voices []string
}

// Requests returns what the fake got, oldest first.
func (o *OpenAISpeech) Requests() []SpeechRequest {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]SpeechRequest(nil), o.reqs...)
}

func (o *OpenAISpeech) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fail := func(status int, typ, param, msg string) {
		var p any
		if param != "" {
			p = param
		}
		writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": p, "code": nil}})
	}
	if r.URL.Path != "/v1/audio/speech" {
		fail(http.StatusNotFound, "invalid_request_error", "", fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path))
		return
	}
	if r.Method != http.MethodPost {
		fail(http.StatusMethodNotAllowed, "invalid_request_error", "", fmt.Sprintf("Invalid method for URL (%s %s)", r.Method, r.URL.Path))
		return
	}
	var req SpeechRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		fail(http.StatusBadRequest, "invalid_request_error", "", "We could not parse the JSON body of your request.")
		return
	}
	req.Authorization = r.Header.Get("Authorization")
	o.mu.Lock()
	o.reqs = append(o.reqs, req)
	key, voices := o.Key, o.Voices
	o.mu.Unlock()
	if key != "" && req.Authorization != "Bearer "+key {
		fail(http.StatusUnauthorized, "invalid_request_error", "", "Incorrect API key provided.")
		return
	}
	format := req.ResponseFormat
	if format == "" {
		format = "mp3"
	}
	switch {
	case req.Model == "":
		fail(http.StatusBadRequest, "invalid_request_error", "model", "you must provide a model parameter")
	case req.Input == "":
		fail(http.StatusBadRequest, "invalid_request_error", "input", "Missing required parameter: 'input'.")
	case len([]rune(req.Input)) > 4096:
		fail(http.StatusBadRequest, "invalid_request_error", "input", fmt.Sprintf("'%s' is too long - 'input'", req.Input[:20]))
	case req.Voice == "":
		fail(http.StatusBadRequest, "invalid_request_error", "voice", "Missing required parameter: 'voice'.")
	case len(voices) > 0 && !contains(voices, req.Voice):
		fail(http.StatusBadRequest, "invalid_request_error", "voice", fmt.Sprintf("Invalid value: '%s'. Supported values are: %v", req.Voice, voices))
	case !contains([]string{"mp3", "opus", "aac", "flac", "wav", "pcm"}, format):
		fail(http.StatusBadRequest, "invalid_request_error", "response_format", fmt.Sprintf("Invalid value: '%s'. Supported values are: 'mp3', 'opus', 'aac', 'flac', 'wav', and 'pcm'.", format))
	case req.Speed != nil && (*req.Speed < 0.25 || *req.Speed > 4):
		fail(http.StatusBadRequest, "invalid_request_error", "speed", "speed must be between 0.25 and 4.0")
	case format != "wav" && format != "pcm":
		fail(http.StatusBadRequest, "invalid_request_error", "response_format", "the fake makes only wav and pcm")
	default:
		body, typ := Tone(req.Input, 24000), "audio/pcm"
		if format == "wav" {
			body, typ = ToneWAV(req.Input, 24000), "audio/wav"
		}
		w.Header().Set("Content-Type", typ)
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
