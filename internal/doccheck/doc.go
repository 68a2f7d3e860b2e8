// Package doccheck reads the reference in docs/ for the tests that hold it
// to the code: the rows of a Markdown table, the first code span of a
// cell, the headings and the table of contents. The tests themselves live
// beside the code they check (config, api, cmd); this package only parses.
//
// It imports nothing of cyan's.
package doccheck
