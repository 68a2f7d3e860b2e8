// Package limitproc is the limit-process (SPEC §6): an ordered chain of
// small stages that police main-virtual's output and tool calls — output
// length, forbidden patterns on outgoing text, messages per channel per
// minute, tool-call gating and rate, per-process token budgets. The order
// is written in one place (order.go), CoreDNS-style; each stage is
// configured by config.Limits and off when its setting is zero.
//
// It is invisible until a stage fires; then it returns a notice, which
// main-virtual stores after the answer as a message from "<name>-limit",
// so the agent knows which limit it hit.
//
// Turns is the chain as main-virtual's turns meet it.
//
// It may import config, packets, glob, llm and turn.
package limitproc
