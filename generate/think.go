package generate

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cyan-agent/cyan/llm"
)

// Think is the reasoning hint of a call: false, true, "auto", "low",
// "medium" or "high". The zero value is false, the seed's default. In JSON
// and YAML it is written as a bool or one of the strings.
type Think string

// The Think values.
const (
	ThinkFalse  Think = "false" // do not ask for reasoning
	ThinkTrue   Think = "true"  // the provider's default reasoning mode
	ThinkAuto   Think = "auto"  // leave it to the provider and model
	ThinkLow    Think = "low"
	ThinkMedium Think = "medium"
	ThinkHigh   Think = "high"
)

// ParseThink reads a think value: a bool, or one of the strings (true and
// false may be written as strings too).
func ParseThink(v any) (Think, error) {
	switch x := v.(type) {
	case nil:
		return ThinkFalse, nil
	case bool:
		if x {
			return ThinkTrue, nil
		}
		return ThinkFalse, nil
	case Think:
		return ParseThink(string(x))
	case string:
		switch t := Think(strings.ToLower(strings.TrimSpace(x))); t {
		case "", ThinkFalse:
			return ThinkFalse, nil
		case ThinkTrue, ThinkAuto, ThinkLow, ThinkMedium, ThinkHigh:
			return t, nil
		}
	}
	return "", fmt.Errorf("think must be false, true, \"auto\", \"low\", \"medium\" or \"high\", not %v", v)
}

// LLM maps the hint onto llm.Think: auto is the provider's default.
func (t Think) LLM() llm.Think {
	switch t {
	case ThinkTrue:
		return llm.ThinkOn
	case ThinkAuto:
		return llm.ThinkDefault
	case ThinkLow:
		return llm.ThinkLow
	case ThinkMedium:
		return llm.ThinkMedium
	case ThinkHigh:
		return llm.ThinkHigh
	}
	return llm.ThinkOff
}

// norm is t with the zero value spelled out.
func (t Think) norm() Think {
	if t == "" {
		return ThinkFalse
	}
	return t
}

// MarshalJSON writes false and true as bools, the rest as strings.
func (t Think) MarshalJSON() ([]byte, error) {
	switch t.norm() {
	case ThinkFalse:
		return []byte("false"), nil
	case ThinkTrue:
		return []byte("true"), nil
	}
	return json.Marshal(string(t))
}

// UnmarshalJSON reads a bool or a string.
func (t *Think) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	p, err := ParseThink(v)
	if err != nil {
		return err
	}
	*t = p
	return nil
}
