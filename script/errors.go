package script

import (
	"errors"
	"fmt"
)

// Error is a mistake in a script file: it names the file, the line and the
// column (in runes, 1-based; 0 when unknown).
type Error struct {
	File      string
	Line, Col int
	Msg       string
}

// Error reads "file:line:col: message".
func (e *Error) Error() string {
	switch {
	case e.Line > 0 && e.Col > 0:
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// InputError is an input that does not match the script's declaration;
// nothing was sent to a model.
type InputError struct {
	Script string
	Input  string // "" for a problem with the inputs as a whole
	Msg    string
}

// Error names the script and the input.
func (e *InputError) Error() string {
	if e.Input == "" {
		return fmt.Sprintf("script %s: %s", e.Script, e.Msg)
	}
	return fmt.Sprintf("script %s: input %q %s", e.Script, e.Input, e.Msg)
}

// ErrNotFound is a script name that no folder holds.
var ErrNotFound = errors.New("no such script")
