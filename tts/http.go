package tts

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
)

// MaxAudioBytes bounds one synthesized answer.
const MaxAudioBytes = 64 << 20

// post sends a JSON body and returns the audio a server answered with, or
// an *Error built from its error body (decode reads the message out of it).
func post(ctx context.Context, c *http.Client, provider, url string, header http.Header, body any, format string, decode func([]byte) string) (Audio, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return Audio{}, fmt.Errorf("tts: %s: encode: %w", provider, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return Audio{}, &Error{Provider: provider, Msg: err.Error(), Fix: "check tts.base_url", Err: err}
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return Audio{}, ctx.Err()
		}
		return Audio{}, &Error{Provider: provider, Unavailable: true, Err: err,
			Msg: fmt.Sprintf("%s does not answer: %v", url, unwrapNet(err)),
			Fix: fmt.Sprintf("start the %s server at %s, or correct tts.base_url", provider, url)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxAudioBytes+1))
	if err != nil {
		if ctx.Err() != nil {
			return Audio{}, ctx.Err()
		}
		return Audio{}, &Error{Provider: provider, Msg: "reading the answer: " + err.Error(), Err: err}
	}
	if resp.StatusCode != http.StatusOK {
		msg := decode(data)
		if msg == "" {
			msg = strings.TrimSpace(string(data))
			if len(msg) > 300 {
				msg = msg[:300] + "…"
			}
		}
		e := &Error{Provider: provider, Msg: fmt.Sprintf("%s answered %s: %s", url, resp.Status, msg)}
		switch {
		case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
			e.Fix = "set tts.api_key"
		case resp.StatusCode == http.StatusNotFound:
			e.Fix = "is tts.base_url the right server? " + url + " does not exist there"
		case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
			e.Unavailable = true
		}
		return Audio{}, e
	}
	if len(data) > MaxAudioBytes {
		return Audio{}, &Error{Provider: provider, Msg: fmt.Sprintf("the audio is over %d bytes; say less at a time", MaxAudioBytes)}
	}
	if len(data) == 0 {
		return Audio{}, &Error{Provider: provider, Msg: "the server answered with no audio"}
	}
	a := Audio{Data: data, Type: mediaType(format, resp.Header.Get("Content-Type"))}
	if a.Type == "audio/wav" {
		if _, err := ParseWAV(data); err != nil {
			return Audio{}, &Error{Provider: provider, Msg: "the server's WAV is not valid: " + err.Error(), Err: err}
		}
	}
	return a, nil
}

func unwrapNet(err error) error {
	var op *net.OpError
	if errors.As(err, &op) {
		return op
	}
	return err
}
