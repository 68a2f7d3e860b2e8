package cmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/daemon"
)

// client talks to a running daemon over its HTTP API.
type client struct {
	base  string // http://host:port
	token string
	http  *http.Client
}

func newClient(cfg *config.Config) *client {
	host, port, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		host, port = "127.0.0.1", "7788"
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1" // a daemon bound to every interface is reached on loopback
	}
	return &client{
		base:  "http://" + net.JoinHostPort(host, port),
		token: daemon.ReadToken(cfg.DataDir),
		http:  &http.Client{},
	}
}

// apiError is an error answer of the daemon.
type apiError struct {
	Status  int
	Type    string
	Message string
}

func (e *apiError) Error() string { return e.Message }

func (c *client) do(method, path string, body any, out any) error {
	resp, err := c.send(method, path, body, "application/json")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("unreadable answer from the daemon at %s: %w", c.base, err)
	}
	return nil
}

// send makes a request and returns the response when it is a success;
// otherwise the daemon's error message.
func (c *client) send(method, path string, body any, accept string) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil || (method != "GET" && method != "HEAD") {
		req.Header.Set("Content-Type", "application/json") // the daemon refuses other bodies on state-changing routes
	}
	req.Header.Set("Accept", accept)
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) {
			return nil, &noDaemonError{base: c.base}
		}
		return nil, err
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	var eb struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		} `json:"error"`
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if json.Unmarshal(raw, &eb) != nil || eb.Error.Message == "" {
		return nil, &apiError{Status: resp.StatusCode, Message: fmt.Sprintf("the daemon answered %s: %s", resp.Status, strings.TrimSpace(string(raw)))}
	}
	return nil, &apiError{Status: resp.StatusCode, Type: eb.Error.Type, Message: eb.Error.Message}
}

// sseEvent is one server-sent event.
type sseEvent struct {
	name string
	data string
}

// readSSE calls fn for each event of a stream until it ends.
func readSSE(r io.Reader, fn func(sseEvent) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	var ev sseEvent
	var data []string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if len(data) > 0 {
				ev.data = strings.Join(data, "\n")
				if err := fn(ev); err != nil {
					return err
				}
			}
			ev, data = sseEvent{}, nil
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "event:"):
			ev.name = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
	return sc.Err()
}

func query(kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			v.Set(kv[i], kv[i+1])
		}
	}
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}

func localTime(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") }

// list GETs path: with asJSON it prints the daemon's answer as it is and
// reports printed; otherwise it decodes the answer into out, one of the
// types the API writes (package api).
func (c *client) list(io IO, path string, asJSON bool, out any) (printed bool, err error) {
	if asJSON {
		return true, printRaw(io, c, path)
	}
	return false, c.do("GET", path, nil, out)
}
