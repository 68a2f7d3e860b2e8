package packets

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// The seed's hard limits on a result: even an "unlimited" request never
// gets more than MaxText characters or MaxFiles files.
const (
	MaxText  = 64 * 1024
	MaxFiles = 512
	// Unlimited is the output_text_limit that asks for no limit (MaxText
	// still applies).
	Unlimited = -1
)

// Natural is the natural ("泛语义") packet: a request in natural language.
// Aim and Scene are single strings, never arrays.
type Natural struct {
	// Aim says what is wanted ("extract the text of %[source.mp4] …").
	Aim string `json:"aim"`
	// Scene is the context that explains the aim.
	Scene string `json:"scene"`
	// Appendix lists the files the request refers to.
	Appendix []string `json:"appendix"`
	// OutputTextLimit is the most characters the result's text may have;
	// -1 means no limit (MaxText still applies).
	OutputTextLimit int `json:"output_text_limit"`
	// OutputFileLimit names the files the caller wants back, in order; an
	// empty list means no limit (MaxFiles still applies).
	OutputFileLimit []string `json:"output_file_limit"`
	// Opened is the appendix as the registry opened it under the caller's
	// permission, one entry per reference, before the tool runs: a
	// reference the caller may not read refuses the whole call, so a step
	// never sees what its caller could not.
	Opened []Opened `json:"-"`
}

// Opened is one appendix reference and the text it opened to.
type Opened struct {
	Ref  string `json:"ref"`
	Text string `json:"text"`
}

// Result is what a tool returns: text (always) and files (optional). A file
// the tool gave up on is "" in its place, so the order of OutputFile
// matches the OutputFileLimit of the request.
type Result struct {
	OutputText string   `json:"output_text"`
	OutputFile []string `json:"output_file"`
	// Structured marks an OutputText that is a structured value (speak's
	// {"speech": […]}): the tool was told the text limit and kept to it
	// itself, in its own terms, so Clip never cuts it (a cut would break
	// the value and lose all of it).
	Structured bool `json:"-"`
}

// Action is the action ("具体动作") packet: a plain object of the
// parameters an application needs, never natural language.
type Action map[string]any

// ErrPacket is wrapped by every decoding error.
var ErrPacket = errors.New("bad packet")

// MaxPacketBytes bounds an encoded packet.
const MaxPacketBytes = 1 << 20

// DecodeNatural reads a natural packet. It is strict, since packets cross
// trust boundaries: unknown fields, an aim or scene that is not a string,
// limits out of range and trailing data are errors that say what to write
// instead. An absent output_text_limit means -1.
func DecodeNatural(b []byte) (Natural, error) {
	var n Natural
	if len(b) > MaxPacketBytes {
		return n, fmt.Errorf("%w: %d bytes; a packet may have at most %d (refer to files with %%[path] instead)", ErrPacket, len(b), MaxPacketBytes)
	}
	var raw map[string]json.RawMessage
	if err := strictUnmarshal(b, &raw); err != nil {
		return n, fmt.Errorf("%w: a natural packet is a JSON object {aim, scene, appendix, output_text_limit, output_file_limit}: %v", ErrPacket, err)
	}
	if raw == nil {
		return n, fmt.Errorf("%w: a natural packet is a JSON object, not null", ErrPacket)
	}
	n.OutputTextLimit = Unlimited
	for k, v := range raw {
		var err error
		switch k {
		case "aim":
			err = stringField(v, &n.Aim)
		case "scene":
			err = stringField(v, &n.Scene)
		case "appendix":
			n.Appendix, err = stringList(v)
		case "output_file_limit":
			n.OutputFileLimit, err = stringList(v)
		case "output_text_limit":
			err = strictUnmarshal(v, &n.OutputTextLimit)
			if err == nil && n.OutputTextLimit < Unlimited {
				err = fmt.Errorf("%d is not a limit; use -1 for none or a number of characters", n.OutputTextLimit)
			}
		default:
			err = errors.New("unknown field; a natural packet has aim, scene, appendix, output_text_limit and output_file_limit")
		}
		if err != nil {
			return Natural{}, fmt.Errorf("%w: %s: %v", ErrPacket, k, err)
		}
	}
	if strings.TrimSpace(n.Aim) == "" {
		return Natural{}, fmt.Errorf("%w: aim is empty; say what the tool should do", ErrPacket)
	}
	if len(n.OutputFileLimit) > MaxFiles {
		return Natural{}, fmt.Errorf("%w: output_file_limit names %d files; at most %d", ErrPacket, len(n.OutputFileLimit), MaxFiles)
	}
	return n, nil
}

// DecodeAction reads an action packet: a JSON object (of any parameters).
func DecodeAction(b []byte) (Action, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return Action{}, nil
	}
	if len(b) > MaxPacketBytes {
		return nil, fmt.Errorf("%w: %d bytes; a packet may have at most %d", ErrPacket, len(b), MaxPacketBytes)
	}
	var a Action
	if err := strictUnmarshal(b, &a); err != nil {
		return nil, fmt.Errorf("%w: an action packet is a JSON object of parameters: %v", ErrPacket, err)
	}
	if a == nil {
		a = Action{}
	}
	return a, nil
}

// TextLimit is the effective text limit in characters (runes).
func (n Natural) TextLimit() int {
	if n.OutputTextLimit < 0 || n.OutputTextLimit > MaxText {
		return MaxText
	}
	return n.OutputTextLimit
}

// Clip applies the request's limits to a result: the text is cut to the
// limit (with "…" when cut, within the limit) unless it is Structured; with named output files, the
// result has exactly one entry per name ("" where the tool gave none);
// without, at most MaxFiles. The order of files is kept.
func (n Natural) Clip(r Result) Result {
	if !r.Structured {
		r.OutputText = CutText(r.OutputText, n.TextLimit())
	}
	files := append([]string(nil), r.OutputFile...)
	if want := len(n.OutputFileLimit); want > 0 {
		for len(files) < want {
			files = append(files, "")
		}
		files = files[:want]
	} else if len(files) > MaxFiles {
		files = files[:MaxFiles]
	}
	if files == nil {
		files = []string{}
	}
	r.OutputFile = files
	return r
}

// CutText cuts s to at most limit runes (limit ≥ 0), ending with "…" when
// it was cut. Invalid UTF-8 is replaced, so the result is always valid.
func CutText(s string, limit int) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if limit < 0 || utf8.RuneCountInString(s) <= limit {
		return s
	}
	if limit == 0 {
		return ""
	}
	i, n := 0, 0
	for n < limit-1 {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		n++
	}
	return s[:i] + "…"
}

func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	if _, err := dec.Token(); err == nil {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

func stringField(v json.RawMessage, dst *string) error {
	t := bytes.TrimSpace(v)
	if len(t) > 0 && t[0] == '[' {
		return errors.New("is a list; write one string (join the parts into a sentence)")
	}
	if err := json.Unmarshal(t, dst); err != nil {
		return errors.New("must be a string")
	}
	return nil
}

func stringList(v json.RawMessage) ([]string, error) {
	if bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
		return []string{}, nil
	}
	var out []string
	if err := json.Unmarshal(v, &out); err != nil {
		return nil, errors.New("must be a list of strings")
	}
	if out == nil {
		out = []string{}
	}
	return out, nil
}

// StepInputs adds the packet's scene, appendix (opened, as [{ref, text}],
// when the registry opened it) and text limit to a step script's inputs,
// where in does not set them already; a script that does not declare them
// never sees them (script.Library.Call). A nil packet adds nothing.
func (n *Natural) StepInputs(in map[string]any) map[string]any {
	if n == nil {
		return in
	}
	add := func(k string, v any) {
		if _, ok := in[k]; !ok {
			in[k] = v
		}
	}
	if n.Scene != "" {
		add("scene", n.Scene)
	}
	switch {
	case len(n.Opened) > 0:
		add("appendix", n.Opened)
	case len(n.Appendix) > 0:
		add("appendix", n.Appendix)
	}
	if n.OutputTextLimit >= 0 {
		add("output_text_limit", n.OutputTextLimit)
	}
	return in
}
