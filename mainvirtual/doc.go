// Package mainvirtual is main-virtual, the agent's first-person loop. Each
// turn it assembles the prompt packet of SPEC §2 — the system prompt's
// sections, each filled by a Source within its token budget, then the
// timestamped context — calls the model, delivers the answer (split at
// "@br", silent on "<empty_reply>"), and only then runs the tool calls the
// answer made, feeding their "#function" results back for the next step.
//
// It is an assembler that sources and tools plug into, not the owner of
// what they hold: memory and the event log fill their sections through
// turn.Source (memory's Sources, events' Log.Sources), the tools' registry
// is offered through Tools (tools.Turns) and the limit-process checks
// through Limiter (limitproc.Turns). The persona's own slots — the main
// prompt, the reference and the lorebook's two — are built in.
//
// A turn's reader (packets.Reader: who it acts for, what they may see, and
// the audience its result goes to) is resolved once when the turn starts,
// by the Tools when they are Readers, and carried in its query to every
// source, tool call and limit. A proactive turn that names no kind (an
// observer's speech) takes its channel's, so its audience is that
// channel's. The owner's lines in the context are marked by id
// (Options.Owner, notation.OwnerLine: "^晴 (owner)").
//
// When the context outgrows its budget, the agent's own older messages are
// compressed, oldest first, by a Compressor (the daemon's runs the compress
// prompt script): user messages never, the persona's
// mini_full_context_count newest model messages never, at most
// agent.compress.per_turn new ones a turn. Compressed forms are kept in the
// store, so a message is compressed once; what still does not fit is
// dropped, oldest first. The packet's trace says which messages were
// compressed (and by which generate trace), which were dropped, and why.
//
// A channel may open with the persona's greeting (Options.Greeting, a
// character card's first_mes): Turn stores it as the channel's first
// message, marked proactive, and delivers it before the answer. A context
// that opens with such a message gets a platform line before it, since
// providers want the conversation to open with a user turn. ${user} in the
// persona's root prompt is the current speaker (UserName).
//
// What a turn stores is posted on the journal by the store; how each turn
// ended (answered, failed or interrupted, and how long it took) it posts
// itself (journal.TurnDone), for the observers and the metrics.
//
// It may import store, persona, persona/lorebook, llm, config, notation,
// journal, packets and turn.
package mainvirtual
