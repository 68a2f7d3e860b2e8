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
// The output stages police text as it is written, once, for every way out
// (Holdback): forbidden patterns and max_output_chars are applied to the
// live stream as it goes, and what the holdback released is what is
// stored, voiced and sent to the bridges. It holds text back only while a
// forbidden pattern could still match across it: for each pattern the
// longest match it can make plus one rune (a bound computed from the
// regular expression; UnboundedHold, 256 runes, for a pattern with "*",
// "+" or an open repeat, while a match still growing at the end holds from
// its start up to MaxOpenMatch), and for a pattern with a literal prefix
// ("sk-") only from where that prefix is or begins. With the default chain
// (no forbidden patterns) nothing is held. max_output_chars ends the text
// where it ends the stored copy (its last rune "…"), and the messages per
// minute end it at the channel's last allowed message. Finish runs the
// rest of the chain on the released messages without applying those two
// stages again.
//
// Turns is the chain as main-virtual's turns meet it.
//
// It may import config, packets, glob, llm and turn.
package limitproc
