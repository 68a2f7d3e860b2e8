package api

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// pipeListener serves connections made of net.Pipe, whose deadlines run
// on the bubble's fake clock: the timeouts below fire at exact fake times,
// with no sleeping and no real network.
type pipeListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error   { l.once.Do(func() { close(l.closed) }); return nil }
func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7788} }

func (l *pipeListener) dial() net.Conn {
	c, s := net.Pipe()
	l.conns <- s
	return c
}

// timeoutServer runs the API behind HTTPServer with short timeouts inside
// a bubble, and calls fn with a dialer.
func timeoutServer(t *testing.T, mutate func(*Options), fn func(t *testing.T, s *Server, dial func() net.Conn)) {
	r := newRig(t, mutate)
	synctest.Test(t, func(t *testing.T) {
		ln := newPipeListener()
		srv := HTTPServer(r.server, Timeouts{ReadHeader: 2 * time.Second, Read: 5 * time.Second, Idle: 7 * time.Second})
		done := make(chan error, 1)
		go func() { done <- srv.Serve(ln) }()
		fn(t, r.server, ln.dial)
		srv.Close()
		<-done
	})
}

func TestSlowHeadersAreCutOff(t *testing.T) {
	timeoutServer(t, nil, func(t *testing.T, _ *Server, dial func() net.Conn) {
		c := dial()
		defer c.Close()
		start := time.Now()
		if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "); err != nil {
			t.Fatal(err)
		}
		// The client stalls; the server hangs up at ReadHeader.
		b, _ := io.ReadAll(c)
		if took := time.Since(start); took != 2*time.Second {
			t.Fatalf("cut off after %s; want exactly the 2s header timeout", took)
		}
		if len(b) > 0 && !strings.Contains(string(b), "408") {
			t.Fatalf("answer: %q", b)
		}
	})
}

func TestSlowBodiesAreCutOff(t *testing.T) {
	timeoutServer(t, nil, func(t *testing.T, _ *Server, dial func() net.Conn) {
		c := dial()
		defer c.Close()
		start := time.Now()
		head := "POST /api/v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
		if _, err := io.WriteString(c, head+`{"channel": "c", "te`); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		if took := time.Since(start); took != 5*time.Second {
			t.Fatalf("answered after %s; want exactly the 5s body timeout", took)
		}
		if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(body), "api.read_timeout") {
			t.Fatalf("answer: %d %s", resp.StatusCode, body)
		}
		// And the connection is closed.
		if n, err := c.Read(make([]byte, 1)); err == nil {
			t.Fatalf("the connection stays open (%d bytes)", n)
		}
	})
}

func TestIdleConnectionsAreClosed(t *testing.T) {
	timeoutServer(t, nil, func(t *testing.T, _ *Server, dial func() net.Conn) {
		c := dial()
		defer c.Close()
		br := bufio.NewReader(c)
		if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("healthz: %v %v", resp, err)
		}
		io.ReadAll(resp.Body)
		start := time.Now()
		if _, err := br.ReadByte(); err == nil {
			t.Fatal("the idle connection sent something")
		}
		if took := time.Since(start); took != 7*time.Second {
			t.Fatalf("idle connection closed after %s; want the 7s idle timeout", took)
		}
	})
}

func TestBodyDeadlineDoesNotCutALongAnswer(t *testing.T) {
	var ctxErr error
	timeoutServer(t, nil, func(t *testing.T, s *Server, dial func() net.Conn) {
		// A route that reads its body, then answers long after the read
		// deadline, like a streamed turn: its context must live on.
		s.mux.HandleFunc("POST /test/long", func(w http.ResponseWriter, r *http.Request) {
			io.ReadAll(r.Body)
			time.Sleep(60 * time.Second)
			ctxErr = r.Context().Err()
			writeJSON(w, 200, map[string]bool{"ok": true})
		})
		c := dial()
		defer c.Close()
		body := `{"x": 1}`
		if _, err := io.WriteString(c, "POST /test/long HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 8\r\n\r\n"+body); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("long answer: %v %v", resp, err)
		}
	})
	if ctxErr != nil {
		t.Fatalf("the request's context ended while answering: %v", ctxErr)
	}
}
