// Package layout holds the repository's structural tests: every package has
// a doc comment, and imports follow the one-way dependency order of SPEC §1.
// It has no non-test code.
//
// It imports nothing of cyan's.
package layout
