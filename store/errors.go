package store

import "errors"

var (
	// ErrLocked means another daemon holds the data dir.
	ErrLocked = errors.New("the data dir is in use by another cyan daemon; stop it first, or set CYAN_DATA_DIR to another folder")
	// ErrNotFound means no such message (or trace) exists.
	ErrNotFound = errors.New("not found")
	// ErrInvalid wraps a rejected input; its message says what to change.
	ErrInvalid = errors.New("invalid")
)
