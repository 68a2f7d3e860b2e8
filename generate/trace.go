package generate

import (
	"encoding/json"
	"time"

	"github.com/cyan-agent/cyan/llm"
)

// Trace is the record of one call: it answers which identity asked, with
// what instruction, which context was visible and what was clipped, which
// hints and behaviour were requested, what shape, how many attempts, in
// which validation mode, and what came back.
type Trace struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"` // always "generate"
	Name    string `json:"name,omitempty"`
	Site    string `json:"site,omitempty"` // a script's generation site ("SUMMARY")
	File    string `json:"file,omitempty"` // the script file, when a script made the call
	Channel string `json:"channel,omitempty"`
	// Packet is the nl_packet of the natural tool whose step made the
	// call (llm.WithPacket), as the tool was sent it.
	Packet json.RawMessage `json:"packet,omitempty"`
	Time   time.Time       `json:"time"`
	Model  string          `json:"model,omitempty"`

	Identity    Identity        `json:"identity"`
	Instruction string          `json:"instruction"`
	Config      Config          `json:"config"`
	Context     []ContextTrace  `json:"context"`
	Shape       json.RawMessage `json:"shape,omitempty"`
	// SchemaMode says whether the provider was asked for JSON-schema output.
	SchemaMode bool          `json:"schema_mode,omitempty"`
	Messages   []llm.Message `json:"messages"`

	Attempts   []Attempt       `json:"attempts"`
	Validation Validation      `json:"validation"`
	Result     json.RawMessage `json:"result,omitempty"`
	Reasoning  string          `json:"reasoning,omitempty"`
	Usage      llm.Usage       `json:"usage"`
	Millis     int64           `json:"ms"`
	Warnings   []string        `json:"warnings,omitempty"`
	Error      string          `json:"error,omitempty"`
}

// Config is the call's hints and runtime behaviour, as used.
type Config struct {
	MaxOutput   int      `json:"max_output"`
	Attempts    int      `json:"attempts"`
	Temperature *float64 `json:"temperature,omitempty"`
	Think       Think    `json:"think"`
	Strict      bool     `json:"strict"`
	Debug       bool     `json:"debug"`
}

// ContextTrace is one context item as it went into the prompt.
type ContextTrace struct {
	Index   int    `json:"index"`
	Source  string `json:"source"`
	Label   string `json:"label"`
	Value   any    `json:"value,omitempty"`
	Text    string `json:"text"`
	Budget  int    `json:"budget"` // tokens; 0: none
	Tokens  int    `json:"tokens"`
	Clipped bool   `json:"clipped"`
}

// Attempt is one try.
type Attempt struct {
	N            int        `json:"n"`
	Raw          string     `json:"raw"` // the reply's content as the provider sent it
	Reasoning    string     `json:"reasoning,omitempty"`
	FinishReason string     `json:"finish_reason,omitempty"`
	Usage        llm.Usage  `json:"usage"`
	Millis       int64      `json:"ms"`
	Validation   Validation `json:"validation"`
	// Feedback is what the next try was told, when there was one.
	Feedback string `json:"feedback,omitempty"`
	Error    string `json:"error,omitempty"` // a provider failure
}

// Validation is the outcome of checking an answer.
type Validation struct {
	OK      bool     `json:"ok"`
	Strict  bool     `json:"strict"`
	Error   string   `json:"error,omitempty"`
	Coerced []string `json:"coerced,omitempty"`
}

// Summary is the short form of a trace that listings show.
type Summary struct {
	ID       string    `json:"id"`
	Kind     string    `json:"kind"`
	Name     string    `json:"name,omitempty"`
	Site     string    `json:"site,omitempty"`
	Channel  string    `json:"channel,omitempty"`
	Time     time.Time `json:"time"`
	OK       bool      `json:"ok"`
	Attempts int       `json:"attempts"`
	Tokens   int       `json:"tokens"`
	Millis   int64     `json:"ms"`
	Error    string    `json:"error,omitempty"`
}

// Summary returns the short form of t.
func (t *Trace) Summary() Summary {
	s := Summary{ID: t.ID, Kind: t.Kind, Name: t.Name, Site: t.Site, Channel: t.Channel, Time: t.Time,
		OK: t.Validation.OK && t.Error == "", Attempts: len(t.Attempts),
		Tokens: t.Usage.InputTokens + t.Usage.OutputTokens, Millis: t.Millis, Error: t.Error}
	if len(s.Error) > 300 {
		s.Error = s.Error[:300] + "…"
	}
	return s
}
