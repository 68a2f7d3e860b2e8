// Package e2e holds end-to-end tests: they build the real cyan binary, run
// it against a data dir on disk and the fake LLM server, and talk to it over
// HTTP and through its command line. It has no non-test code.
//
// It imports nothing of cyan's.
package e2e
