package generate

import (
	"errors"
	"fmt"
)

// ErrorKind says why a call failed.
type ErrorKind string

// The kinds of Error.
const (
	// KindRequest: the call was not made; the request itself is wrong (no
	// instruction, a reserved label, a shape that is not a JSON Schema).
	KindRequest ErrorKind = "request"
	// KindLLM: the provider failed (auth, network, timeout, model not
	// found, quota, …); Err is the *llm.Error, or the context's error.
	KindLLM ErrorKind = "llm"
	// KindParse: no attempt held a usable JSON value.
	KindParse ErrorKind = "parse"
	// KindValidation: the last attempt's value did not match the shape.
	KindValidation ErrorKind = "validation"
)

// Error is a failed call. Trace is the call's trace (also kept in the ring
// under TraceID when there is one).
type Error struct {
	Kind     ErrorKind
	Name     string // what made the call
	Site     string // the script's generation site, if any
	Attempts int    // tries made
	TraceID  string
	Trace    *Trace
	Err      error
}

// Error says what failed and what to do about it.
func (e *Error) Error() string {
	who := "generate"
	if e.Name != "" {
		who += " " + e.Name
	}
	if e.Site != "" {
		who += " [[" + e.Site + "]]"
	}
	switch e.Kind {
	case KindParse, KindValidation:
		what := "invalid output"
		if e.Kind == KindParse {
			what = "no usable output"
		}
		s := fmt.Sprintf("%s: %s after %d attempt(s): %v", who, what, e.Attempts, e.Err)
		if e.TraceID != "" {
			s += " (trace " + e.TraceID + ")"
		}
		return s + "; give it more attempts, a simpler shape, strict: false, or a more capable model"
	}
	return who + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// IsOutputError reports whether err is a call whose answers never made a
// valid value (as opposed to a provider failure or a bad request).
func IsOutputError(err error) bool {
	var e *Error
	return errors.As(err, &e) && (e.Kind == KindParse || e.Kind == KindValidation)
}
