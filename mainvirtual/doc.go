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
// prompt, the reference and the lorebook's two — are built in. The
// lorebook's slots get the book's token_budget, else a quarter of the
// model's window (SillyTavern's default World Info share), so a larger
// window gives it more.
//
// A model output leaves by one way (outflow, way.go): the cleaner (a
// reasoning block the chat template opened, the agent's own copied line
// prefix, a line forged for another speaker and all after it), the markup
// filter ("@br", "<empty_reply>", the usage trailer, @last references) and
// the limit-process's holdback (turn.TextLimit, from a StreamLimiter), in
// that order, as the provider writes it. What comes out is the live stream
// and, message by message, the stored replies — so the page, the voice and
// the bridges all get the one policed text. A speak result's segments pass
// the limit-process too. A stream cut before its finish is asked again
// when nothing was shown; otherwise the shown part is stored marked
// Incomplete and the stream gets a Cut event.
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
// The prompt is fitted to the server's context window (Options.Window;
// window.go): the tools' schemas are counted with the system prompt, the
// conversation gets what they leave of the window (less a reserve for the
// answer and a margin for the server's tokenizer), and when even that is
// too little the pulled info, the lorebook and the style examples give
// way, in that order. Nothing is cut silently: the packet's trace
// (turn.WindowTrace, the sections' notes, the context's dropped messages)
// says what left and why. A context-length error on a turn's first call
// assembles the prompt again within what the server said and retries
// once; the window the error stated is kept for later turns.
//
// What a model's answers showed about it is kept in the store by model
// (facts.go, store.PrefixModelFacts), so a restart does not learn it
// again the hard way: that its chat template opens its reasoning (a bare
// "</think>": its streams are held until it, the first after a restart
// too), and the window its server's context-length error stated (until
// the window function reads another window than it read then).
//
// A small model's tool calls are repaired when their intent is plain
// (repair.go): a known other name (save_memory → remember), unclosed
// JSON, a list of one or a number where the schema wants a string, a call
// written as text in a ```json fence or a <tool_call> tag. Each repair is
// in the step's trace; a call past repair does not run, and the model
// reads one instruction about it.
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
