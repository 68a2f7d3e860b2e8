// Package crash is the crash and fault harness behind `cyan bench crash`:
// it runs the real cyan binary over one data dir, drives concurrent
// conversations against it (each message sent with an idempotency key, and
// sent again until acknowledged, as a careful client would), kills it with
// SIGKILL at random moments — while it opens its store as well as while it
// answers — starts it again, and checks that every acknowledged message and
// its reply are there exactly once and in order, that every start opened,
// and that recall, the workspace and the event log answer. Fault modes put
// the data dir on a small disk that fills up (disk-full), or on a disk whose
// writes are throttled (slow-disk); both need root on Linux.
//
// The model is a fake (internal/llmtest) answering each message with a
// reply that names it.
//
// It may import internal/llmtest and llm.
package crash
