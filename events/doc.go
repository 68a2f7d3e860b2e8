// Package events owns the agent's life story and the people in it (SPEC §4):
//
//   - the event log: one record per topic of conversation, closed by
//     silence or by the `event` tool, titled and scored by a prompt script; day,
//     week, month and year records summarised from their children on a
//     cron schedule, with durable markers so that periods missed while the
//     daemon was down are caught up and a failed summary is retried, never
//     skipped; the "recent event records" section of the prompt, chosen by
//     memory, recency and importance and rendered in time order, each as
//     the %[event <label>] reference that opens it (open.go: its summary
//     and the history ranges of the runs of messages it keeps);
//   - objects (people, agents, things) with info blocks, and relation lines
//     between two objects whose weight decays by time (decay.go);
//   - theory packets, kept at their current version only; the ones the
//     current topic's talk touches come to its pulled-info area
//     (topictheories.go), found through a consumer-side TheoryFinder the
//     daemon fills with the recall index.
//
// Each channel has its own chain of records: a group chat's life story never
// shows in another chat's prompt. Objects, relations and theories are
// shared, but every block, line and theory has a scope (scope.go): what a
// group's topic showed stays that group's until the owner confirms it
// (ConfirmBlock), and the theory tool and Open (the open tool's event,
// theory and object references) read and write only what the caller's
// permission allows.
//
// Recall indexes the titled records and the theories (Titled, Theories,
// Watch tells it of changes); a recall hit on a record, or on the chat log
// of a topic (TopicsAt), reviews it (Review), in days.
//
// The LLM-backed steps go through the Writer interface, filled by the
// daemon with a ScriptWriter: each step is a prompt script (event_title,
// event_summary, event_extraction) run through a consumer-side Scripts
// interface, so this package imports neither script nor generate. The
// `event` and `theory` tools are exported as packets.Tool (Tools), for the
// tool registry. After an import, Imports builds the events its history
// implies; Records lists what a search finds, and where.
// It keeps its data in the store's database under the prefixes registered
// in store/keys.go.
//
// Log.Sources are its parts of a turn's prompt: the events slot and the
// topic's theories in the pulled-info area.
//
// It may import store, config, packets, llm, notation, journal, backoff,
// clock and turn.
package events
