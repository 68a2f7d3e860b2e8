//go:build unix

package tools

import "syscall"

const nonblock = syscall.O_NONBLOCK
