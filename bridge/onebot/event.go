package onebot

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ID is a OneBot number id (user_id, group_id, message_id, self_id),
// read from a JSON number or a string of digits (some implementations send
// strings), kept as its decimal text.
type ID string

// UnmarshalJSON implements json.Unmarshaler.
func (id *ID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		*id = ""
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		s = strings.TrimSpace(s)
		if _, err := strconv.ParseInt(s, 10, 64); err != nil && s != "" {
			return fmt.Errorf("id %q is not a number", s)
		}
		*id = ID(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("id: %w", err)
	}
	if _, err := n.Int64(); err != nil {
		return fmt.Errorf("id %s is not an integer", n)
	}
	*id = ID(n.String())
	return nil
}

// Sender is a message event's sender.
type Sender struct {
	UserID   ID     `json:"user_id"`
	Nickname string `json:"nickname"`
	Card     string `json:"card"`
	Role     string `json:"role"`
}

// Anonymous is an anonymous group sender.
type Anonymous struct {
	ID   ID     `json:"id"`
	Name string `json:"name"`
}

// Event is one OneBot event: a message, a notice, a request or a meta
// event (lifecycle, heartbeat).
type Event struct {
	Time          int64      `json:"time"`
	SelfID        ID         `json:"self_id"`
	PostType      string     `json:"post_type"`
	MessageType   string     `json:"message_type"`
	SubType       string     `json:"sub_type"`
	MessageID     ID         `json:"message_id"`
	UserID        ID         `json:"user_id"`
	GroupID       ID         `json:"group_id"`
	Anonymous     *Anonymous `json:"anonymous"`
	RawMessage    string     `json:"raw_message"`
	Sender        Sender     `json:"sender"`
	MetaEventType string     `json:"meta_event_type"`
	Interval      int64      `json:"interval"`
	NoticeType    string     `json:"notice_type"`
	TargetID      ID         `json:"target_id"`   // notify/poke: who was poked
	SenderID      ID         `json:"sender_id"`   // a friend poke: who poked
	OperatorID    ID         `json:"operator_id"` // group_recall: who recalled
	Duration      seconds    `json:"duration"`    // group_ban
	// Status is a heartbeat's (NapCat OB11HeartbeatEvent: online, good).
	Status  *HeartStatus `json:"status"`
	NameNew string       `json:"name_new"` // notify/group_name: the new name
	Tag     string       `json:"tag"`      // bot_offline: the kick's title
	// Why is a bot_offline notice's message (its tipsDesc); the key is
	// "message", read apart from a message event's segments.
	Why string `json:"-"`
	// Message holds the segments, from either format.
	Message []Segment `json:"-"`
	// Format is the message format the event used: "array" or "string".
	Format string `json:"-"`
}

// Errors of ParseFrame.
var (
	ErrNotJSON   = errors.New("onebot: the frame is not a JSON object")
	ErrMalformed = errors.New("onebot: malformed event")
)

// Frame is what one WebSocket text frame carries: an event, or the
// response to an API call.
type Frame struct {
	Event    *Event
	Response *Response
}

// Response answers an API call.
type Response struct {
	Status  string          `json:"status"`
	Retcode int             `json:"retcode"`
	Data    json.RawMessage `json:"data"`
	Echo    json.RawMessage `json:"echo"`
	Message string          `json:"message"` // go-cqhttp and NapCat add these
	Wording string          `json:"wording"`
}

// ParseFrame reads one frame. A frame with post_type is an event; one
// with retcode or status is a response.
func ParseFrame(b []byte) (Frame, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(b, &probe); err != nil || probe == nil {
		return Frame{}, ErrNotJSON
	}
	if _, ok := probe["post_type"]; ok {
		ev, err := parseEvent(b, probe)
		if err != nil {
			return Frame{}, err
		}
		return Frame{Event: ev}, nil
	}
	_, hasStatus := probe["status"]
	_, hasRet := probe["retcode"]
	if hasStatus || hasRet {
		r := new(Response)
		if err := json.Unmarshal(b, r); err != nil {
			return Frame{}, fmt.Errorf("%w: response: %v", ErrMalformed, err)
		}
		return Frame{Response: r}, nil
	}
	return Frame{}, fmt.Errorf("%w: neither an event (post_type) nor a response (status, retcode)", ErrMalformed)
}

func parseEvent(b []byte, probe map[string]json.RawMessage) (*Event, error) {
	ev := new(Event)
	if err := json.Unmarshal(b, ev); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	switch ev.PostType {
	case "message", "message_sent":
		raw, ok := probe["message"]
		if !ok {
			return nil, fmt.Errorf("%w: a message event without message", ErrMalformed)
		}
		segs, format, err := parseMessage(raw)
		if err != nil {
			return nil, err
		}
		ev.Message, ev.Format = segs, format
		switch ev.MessageType {
		case "private":
		case "group":
			if ev.GroupID == "" {
				return nil, fmt.Errorf("%w: a group message without group_id", ErrMalformed)
			}
		default:
			return nil, fmt.Errorf("%w: message_type %q is neither private nor group", ErrMalformed, ev.MessageType)
		}
		if ev.UserID == "" {
			return nil, fmt.Errorf("%w: a message event without user_id", ErrMalformed)
		}
	case "notice":
		if raw, ok := probe["message"]; ok && len(raw) > 0 && raw[0] == '"' {
			_ = json.Unmarshal(raw, &ev.Why)
		}
	case "meta_event", "request":
	default:
		return nil, fmt.Errorf("%w: unknown post_type %q", ErrMalformed, ev.PostType)
	}
	return ev, nil
}

// parseMessage reads a message value: a CQ-code string, an array of
// segments or a single segment.
func parseMessage(raw json.RawMessage) ([]Segment, string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, "", fmt.Errorf("%w: empty message", ErrMalformed)
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, "", fmt.Errorf("%w: message: %v", ErrMalformed, err)
		}
		return ParseCQ(s), "string", nil
	case '[':
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, "", fmt.Errorf("%w: message: %v", ErrMalformed, err)
		}
		segs := make([]Segment, 0, len(items))
		for i, it := range items {
			s, err := parseSegment(it)
			if err != nil {
				return nil, "", fmt.Errorf("%w: message[%d]: %v", ErrMalformed, i, err)
			}
			segs = append(segs, s)
		}
		return segs, "array", nil
	case '{':
		s, err := parseSegment(raw)
		if err != nil {
			return nil, "", fmt.Errorf("%w: message: %v", ErrMalformed, err)
		}
		return []Segment{s}, "array", nil
	}
	return nil, "", fmt.Errorf("%w: message is neither a string nor segments", ErrMalformed)
}

// HeartStatus is a heartbeat's status: Online false (NapCat sends
// !!selfInfo.online) means the account is logged out though the
// connection is up.
type HeartStatus struct {
	Online *bool `json:"online"`
	Good   bool  `json:"good"`
}

// parseSegment reads {"type", "data"}; data values that are not strings
// (numbers, booleans, and the objects and arrays of json cards and
// forward nodes) are kept as their JSON text.
func parseSegment(raw json.RawMessage) (Segment, error) {
	var w struct {
		Type string                     `json:"type"`
		Data map[string]json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return Segment{}, err
	}
	if w.Type == "" {
		return Segment{}, errors.New("a segment without type")
	}
	s := Segment{Type: w.Type, Data: make(map[string]string, len(w.Data))}
	for k, v := range w.Data {
		v = bytes.TrimSpace(v)
		switch {
		case len(v) == 0 || string(v) == "null":
		case v[0] == '"':
			var str string
			if json.Unmarshal(v, &str) == nil {
				s.Data[k] = str
			}
		default:
			s.Data[k] = string(v)
		}
	}
	return s, nil
}

// UnmarshalJSON implements json.Unmarshaler: a status that is not an
// object (no implementation sends one in an event, but a frame is
// untrusted) says nothing rather than making the event malformed.
func (s *HeartStatus) UnmarshalJSON(b []byte) error {
	type plain HeartStatus
	var p plain
	if json.Unmarshal(b, &p) != nil {
		*s = HeartStatus{}
		return nil
	}
	*s = HeartStatus(p)
	return nil
}
