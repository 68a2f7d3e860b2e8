// Package bridge connects chat platforms (QQ through OneBot v11, Telegram,
// and later others such as Milky) to the companion, with the manners a
// group chat needs.
//
// An Adapter speaks one platform's protocol and knows nothing of manners:
// it keeps its connection (a lost one ends Run, and the supervisor
// restarts the bridge with backoff; OneBot's forward dialer reconnects by
// itself), hands each incoming
// message to a Sink in a protocol-neutral form (Message: text, mention,
// reply, image, sticker, voice and face parts) and sends what it is given.
// A Bridge wraps one adapter: it stores every message of every chat it may
// serve (so the model sees the whole conversation as "^name:" lines), runs
// a turn only when the bot is addressed (an @mention, a reply to its
// message, its name or a wake word, or the optional chime-in), batches
// bursts into one following turn, holds per-group and per-user rate limits,
// allow and deny lists and quiet hours, shows that it is typing, keeps
// images in the data dir under size limits (the bridge's, each chat's,
// and a disk floor above the store's: messages always win over pictures)
// as "%[…]" references, fetched only from public addresses or the
// implementation's own file server (FetchPolicy; why one was not fetched
// goes to the log, never to the stored text) (all of a
// message's fetched at once, for at most its media budget; on a platform
// that pushes without acknowledgement, a Pusher, a message waiting for its
// media holds up no other — only a turn in its own chat waits for it),
// renders a reply with the message it answers ("[reply to ^name [time]:
// …]"), cuts an incoming text over MaxInboundBytes with a note, marks
// recalled messages (Noticer, Recaller) and counts a poke of the bot as
// addressing it (unless manners.ignore_pokes names the group), and
// sends the outgoing messages of its channels — split at "@br" by the
// agent, with a short human-like pause between parts, the outgoing mention
// and reply notation rendered for the platform.
//
// A bridge is a component of the router (package router): the daemon
// subscribes it to its channels ("<bridge name>:*") and runs it as a
// supervised part, whose Run keeps the adapter connected and attaches to
// the router, which hands Deliver the outgoing packets (replies and
// proactive messages) from the bridge's durable outbox — in order, once,
// waiting while the platform is away and across daemon restarts; Deliver
// waits for a connection, splits what is longer than the platform takes
// (an adapter's Limit: at paragraphs, then sentences, then words; each
// piece under its own key; "too long" splits again), retries what may work
// later and tells the model (a note in the chat) and the status what could
// not be delivered, and what the platform took without confirming (never
// sent again: its outcome is unknown). The outbox is laned per chat
// (router.AttachLanes): a chat where the bot is muted (ChatEvents.Muted,
// or a send refused as muted) holds only its own answers, until the mute
// ends or MuteHoldMax; a chat the platform moved (ChatEvents.Moved, a send
// refused with its new id) keeps its channel, its new id an alias kept in
// a MoveLog; an answer never replies to a made-up id (SyntheticID), and
// one whose reply the platform refuses goes without it. A sent log keeps what was sent, so a packet or piece
// offered again after a restart is not sent twice, and its Flights the
// sends under way, so one a crash cut is looked for in the chat (Finder)
// before it is sent again. After each connection the bridge catches up
// (catchup.go): what each chat said while it was away, read from the
// chat's history (CatchUp), is stored in order and starts at most one
// turn, for the newest message that addressed the bot. An owed log keeps each
// chat's newest addressed message until its turn ends, so a turn a restart
// cut runs, once, when the bridge starts again (if not too old); a who log
// keeps who wrote privately, for `cyan bridges who`.
// A chat the daemon voices (Options.Voiced: tts.channels) gets a reply's
// voice message from an adapter that sends them (VoiceSender: OneBot's
// record, Telegram's sendVoice), as Options.VoiceMode says (voice.go): the
// text first, then the voice under the packet's key + "#voice" (sent
// once, like a piece), or the voice instead of the text; a voice that
// cannot be made or sent never holds back the text.
// Each state change (connecting, connected, disconnected, offline,
// silent, stopped, failed) goes on the journal as a journal.BridgeState
// event.
//
// A connection is not an account (health.go): an adapter that hears the
// platform log the account out (AccountWatcher) makes the bridge offline —
// not connected, its answers waiting, the owner alerted on another bridge
// (Options.Alert) — and a connected bridge whose chats were busy and that
// then hears nothing for SilentAfter is probed (Prober) and flagged.
// Each update kind reaches the model as what it is (events.go): a service
// message (Message.Notice) as a platform line, an edit (Message.Edited) as
// the stored message's new text (Editor), asking for a turn when it newly
// addresses the bot, an admin's recall of the bot's own message as its
// stored reply marked recalled (RecallNoticer, OwnRecaller; the sent
// log's SentIDs finds the reply's key from the platform id, and tells a
// reply to the bot's message, across a restart for StoreSent). The chat
// commands /help, /start, /reset (Resetter) and the owner's /pause and
// /resume are answered by the bridge at once (commands.go), outside any
// turn and the conversation.
//
// Channels are "<bridge name>:group:<id>" and "<bridge name>:private:<id>",
// and "<bridge name>:group:<chat id>:<thread id>" for a forum topic;
// speakers are identified by "<bridge name>:<user id>" (the owner is
// "id:<bridge name>:<user id>" in permissions.owners), never by display
// name.
//
// The companion side is consumed through a small interface declared here
// (Agent: store without a turn, answer over what is stored, note, the
// platform id of a quoted message). Time is injected through a clock.Clock.
//
// Each platform is a package under bridge/ that declares itself (package
// registry) in one file, platform.go: its configuration section
// bridges.<key> (a list of named instances), that section's defaults and
// checks, how its adapters are built (Platform.Build), its `cyan doctor`
// check (Platform.Doctor) and which of its errors a restart cannot mend
// (Platform.Permanent). Config, the daemon, the doctor and the help read
// the registry; none of them names a platform. The three of today show it:
// onebot (reverse and forward WebSocket: one section, two modes, a shared
// reverse socket mounted on the API's server) and telegram (long polling
// or a webhook mounted per bot).
//
// Adding a platform (say, Milky):
//  1. Make the package bridge/milky with an Adapter (adapter.go): connect
//     (a lost connection ends Run with its error; the supervisor
//     restarts it), hand each message to the Sink as a Message, send
//     what Send is given; Limit, Typer, Pusher and the other optional
//     interfaces as the platform allows.
//  2. In bridge/milky/platform.go declare the platform: a Section type (a
//     slice of the instance's config struct, with yaml tags; config.Duration
//     and *config.Manners serve it), its Names, Validate (call
//     config.ValidateManners for each instance's manners) and Redacted, and
//     Build, Doctor and Permanent; the guard
//     `var _ bridge.Platform = (*Section)(nil)`; and an init that calls
//     registry.RegisterPlatform(registry.Platform{Key: "milky", About: …,
//     New: func() registry.Section { return new(Section) }}).
//  3. Add the line `_ "github.com/cyan-agent/cyan/bridge/milky"` to the
//     daemon's platforms.go.
//
// That is all: bridges.milky is then a key of the configuration (checked
// by `cyan config check`), its bridges are built, supervised and mounted,
// `cyan doctor` checks them and `cyan help bridges` lists the platform.
// The layering test gives a package bridge/<platform> the imports of the
// others (bridge, config, registry, clock) without a row of its own. Its
// fake of the real platform goes to internal/, its tests beside it.
//
// Images turns the "%[images/…]" references this package writes back into
// image data for a model that accepts images.
//
// It may import router, journal, store, config, notation, clock, registry and llm.
package bridge
