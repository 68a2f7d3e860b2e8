package events

import "errors"

var (
	// ErrInvalid wraps a rejected input; its message says what to change.
	ErrInvalid = errors.New("invalid")
	// ErrNotFound means no such record, object or theory.
	ErrNotFound = errors.New("not found")
	// ErrDenied is a change the caller's permission does not allow.
	ErrDenied = errors.New("denied")
)
