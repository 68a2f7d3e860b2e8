// Package layout holds the repository's structural tests: every package has
// a doc comment that names what it may import, exactly as the layering
// table says; imports, and every package's transitive dependencies, follow
// the one-way order of SPEC §1 (layout_test.go, deps_test.go); no package
// but glob matches patterns of its own (glob_test.go); and the documents
// hold together (the README stays a short front door; every relative link
// in README.md and docs/*.md resolves, anchors included; every docs file
// opens with its table of contents). It has no non-test code.
//
// It imports nothing of cyan's.
package layout
