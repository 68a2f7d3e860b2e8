package importer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/store"
)

// MaxLineBytes bounds one JSON line.
const MaxLineBytes = 1 << 20

// Line is one JSON line of a history file.
type Line struct {
	Time    string `json:"time"`
	Channel string `json:"channel"`
	User    string `json:"user"`
	Role    string `json:"role,omitempty"`
	Text    string `json:"text"`
	ID      string `json:"id,omitempty"`
}

// LineOf is the history line of a message (what the CLI sends).
func LineOf(m *store.Message) Line {
	return Line{Time: m.Time.Format(time.RFC3339Nano), Channel: m.Channel, User: m.User, Role: string(m.Role), Text: m.Text, ID: m.ExternalID}
}

// LineError is a bad line; Line counts from 1.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// JSONL reads history lines one at a time.
type JSONL struct {
	sc      *bufio.Scanner
	line    int
	channel string
}

// NewJSONL reads r; channel, when set, puts every line into that channel
// (a line's own channel is then ignored).
func NewJSONL(r io.Reader, channel string) *JSONL {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxLineBytes)
	return &JSONL{sc: sc, channel: channel}
}

// Line is the number of the last line read.
func (j *JSONL) Line() int { return j.line }

// Next returns the next message, io.EOF at the end, or a *LineError.
// Blank lines are skipped.
func (j *JSONL) Next() (*store.Message, error) {
	for j.sc.Scan() {
		j.line++
		b := bytes.TrimSpace(j.sc.Bytes())
		if len(b) == 0 {
			continue
		}
		m, err := ParseLine(b, j.channel)
		if err != nil {
			return nil, &LineError{Line: j.line, Err: err}
		}
		return m, nil
	}
	if err := j.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &LineError{Line: j.line + 1, Err: fmt.Errorf("the line is over %d bytes", MaxLineBytes)}
		}
		return nil, err
	}
	return nil, io.EOF
}

// ParseLine parses one history line into a message.
func ParseLine(b []byte, channel string) (*store.Message, error) {
	var l Line
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return nil, fmt.Errorf("not a history line {\"time\", \"channel\", \"user\", \"role\"?, \"text\", \"id\"?}: %v", err)
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value on the line")
	}
	return FromLine(l, channel)
}

// FromLine checks a history line and makes its message.
func FromLine(l Line, channel string) (*store.Message, error) {
	t, err := time.Parse(time.RFC3339Nano, l.Time)
	if err != nil {
		return nil, fmt.Errorf("time %q is not RFC 3339 (e.g. 2024-05-01T21:30:00+08:00)", l.Time)
	}
	if channel != "" {
		l.Channel = channel
	}
	if l.Channel == "" {
		return nil, errors.New("no channel: give the line a \"channel\" or import with --channel")
	}
	if err := store.ValidChannel(l.Channel); err != nil {
		return nil, err
	}
	if strings.TrimSpace(l.Text) == "" {
		return nil, errors.New("the text is empty")
	}
	role := store.Role(l.Role)
	switch role {
	case "":
		role = store.RoleUser
	case store.RoleUser, store.RoleAssistant, store.RoleSystem, store.RoleTool:
	default:
		return nil, fmt.Errorf("role %q is not user, assistant, system or tool", l.Role)
	}
	if len(l.ID) > store.MaxExternalIDLen {
		return nil, fmt.Errorf("the id is %d bytes; the limit is %d", len(l.ID), store.MaxExternalIDLen)
	}
	return &store.Message{Channel: l.Channel, Role: role, User: l.User, Text: l.Text, Time: t, ExternalID: strings.TrimSpace(l.ID)}, nil
}
