// Package limitproc will own the limit-process: an ordered chain of output
// policies written in one file (output length, forbidden patterns, messages per
// channel per minute, tool-call gating, token budgets). It is invisible until a
// stage fires; then a message from "<system name>-limit" follows the answer.
//
// It may import config and packets only.
package limitproc
