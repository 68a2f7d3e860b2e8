// Package memory will own the workspace: items with their memory state
// (R, S, D, a, last_T and last_compressed_state), the decay curve, passive and
// active GC, the pulled-info area and plan steps, and the sections of the
// prompt packet they fill.
//
// It may import store, config and packets.
package memory
