// Package memory is the workspace of main-virtual (SPEC §3): items the agent
// keeps in mind — notes, file references %[path] and reference info
// {source, current, extra_data} — each with a memory state (R, S, D, a,
// last_T and last_compressed_state) that decays over the agent's turns by a
// spaced-repetition law unless the item is used. Time counts per scope: an
// item's T counts only the turns of the conversations it is shown in (the
// owner's private chats, or its own group), so a busy group never fades
// the owner's private items (clock.go has the rule). Passive GC lets faded
// items leave the workspace (they stay in the long-term store with their
// history); active GC compresses or evicts the weakest items when the
// workspace outgrows its token budget. It also keeps the pulled-info area
// (per channel; what tools and the recall tool pulled, forgotten once the
// channel's next message is answered) and the plan steps, fills their
// sections of the prompt packet, and exports the tools remember,
// context_operation, plan and workspace_usage (Tools, as packets.Tool:
// workspace_usage is offered only while the caller's workspace holds
// something). Each item remembers the
// message whose turn made it, so a recall of that message reviews it
// (ReviewFrom).
//
// Its LLM-backed steps are prompt scripts — remember, compress_item and
// context_operation — run through the Natural interface, which the daemon
// fills with the script library; without one, remember adds a note and
// active GC evicts instead of compressing.
//
// Sources are its slots of a turn's prompt (workspace, pulled info, plans).
//
// It may import store, config, packets, llm, notation, journal, clock and
// turn.
package memory
