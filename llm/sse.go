package llm

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// sseEvent is one server-sent event.
type sseEvent struct {
	Event string // the event: field, "" when the stream named none
	Data  string // data: lines joined by "\n"
}

// maxSSELine bounds one line and one event's data, so a broken stream
// cannot eat the memory.
const maxSSELine = 16 << 20

// sseReader parses a text/event-stream body, for both providers. It
// handles event: lines, multi-line data:, comments, LF, CRLF and CR line
// ends, and treats a "[DONE]" data payload (OpenAI) as the end of the
// stream. id: and retry: fields are ignored.
type sseReader struct {
	r       *bufio.Reader
	pending []string // lines already split off a CR-separated read
	done    bool
	sawDone bool // the stream ended with "[DONE]"
}

// CutError is a stream that ended before its finish: no finish reason and
// no "[DONE]" (OpenAI-compatible), no message_stop (Anthropic). Ollama's
// OpenAI layer ends a stream so when its model runner dies mid-answer: the
// runner's error goes to the server's log, not to the stream. Every
// provider's stream reports it the same way; the caller decides what to do
// with what it was shown (main-virtual asks again when nothing was shown,
// and otherwise stores the shown part marked incomplete).
type CutError struct {
	Provider string
	Model    string
	// Missing names what did not come ("a finish reason or [DONE]").
	Missing string
}

func (e *CutError) Error() string {
	msg := fmt.Sprintf("llm: the %s stream of %s ended mid-answer without %s: the server stopped generating", e.Provider, e.Model, e.Missing)
	if e.Provider == "openai" {
		msg += " (Ollama does this when its model runner stops: see the server's log)"
	}
	return msg
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 32<<10)}
}

// next returns the next event, io.EOF at the end of the stream (or after
// [DONE]), or the read error. An event cut off by the end of the stream is
// still returned.
func (s *sseReader) next() (sseEvent, error) {
	if s.done {
		return sseEvent{}, io.EOF
	}
	var (
		ev      sseEvent
		data    strings.Builder
		hasData bool
	)
	for {
		line, err := s.line()
		if err != nil {
			if err == io.EOF && hasData {
				break
			}
			if err == io.EOF {
				s.done = true
			}
			return sseEvent{}, err
		}
		if line == "" {
			if hasData {
				break
			}
			ev.Event = "" // an event without data is not dispatched
			continue
		}
		if line[0] == ':' {
			continue // comment
		}
		field, value, found := strings.Cut(line, ":")
		if found {
			value = strings.TrimPrefix(value, " ")
		}
		switch field {
		case "event":
			ev.Event = value
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			if data.Len()+len(value) > maxSSELine {
				return sseEvent{}, errors.New("llm: stream event too large")
			}
			data.WriteString(value)
			hasData = true
		}
	}
	ev.Data = data.String()
	if ev.Data == "[DONE]" {
		s.done, s.sawDone = true, true
		return sseEvent{}, io.EOF
	}
	return ev, nil
}

// line returns the next line without its end; io.EOF when none is left.
func (s *sseReader) line() (string, error) {
	if len(s.pending) > 0 {
		l := s.pending[0]
		s.pending = s.pending[1:]
		return l, nil
	}
	var buf []byte
	for {
		chunk, err := s.r.ReadSlice('\n')
		if len(buf)+len(chunk) > maxSSELine {
			return "", fmt.Errorf("llm: stream line longer than %d bytes", maxSSELine)
		}
		buf = append(buf, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF {
			if len(buf) == 0 {
				return "", io.EOF
			}
			break
		}
		if err != nil {
			return "", err
		}
		break
	}
	l := string(buf)
	l = strings.TrimSuffix(l, "\n")
	l = strings.TrimSuffix(l, "\r")
	if strings.IndexByte(l, '\r') >= 0 {
		parts := strings.Split(l, "\r")
		s.pending = append(s.pending, parts[1:]...)
		l = parts[0]
	}
	return l, nil
}

// each calls fn with every event that carries data, in order, until the
// stream ends (nil), fn says stop, or fn or the reader fails.
func (s *sseReader) each(fn func(ev sseEvent) (stop bool, err error)) error {
	for {
		ev, err := s.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if strings.TrimSpace(ev.Data) == "" {
			continue
		}
		if stop, err := fn(ev); err != nil || stop {
			return err
		}
	}
}
