// Package layout holds the repository's structural tests: every package has
// a doc comment, imports follow the one-way dependency order of SPEC §1,
// and the documents hold together (the README stays a short front door;
// every relative link in README.md and docs/*.md resolves, anchors
// included; every docs file opens with its table of contents). It has no
// non-test code.
//
// It imports nothing of cyan's.
package layout
