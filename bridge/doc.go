// Package bridge connects chat platforms (QQ through OneBot v11, Telegram,
// and later others such as Milky) to the companion, with the manners a
// group chat needs.
//
// An Adapter speaks one platform's protocol and knows nothing of manners:
// it keeps its connection (reconnecting with backoff), hands each incoming
// message to a Sink in a protocol-neutral form (Message: text, mention,
// reply, image, sticker, voice and face parts) and sends what it is given.
// A Bridge wraps one adapter: it stores every message of every chat it may
// serve (so the model sees the whole conversation as "^name:" lines), runs
// a turn only when the bot is addressed (an @mention, a reply to its
// message, its name or a wake word, or the optional chime-in), batches
// bursts into one following turn, holds per-group and per-user rate limits,
// allow and deny lists and quiet hours, shows that it is typing, keeps
// images in the data dir under a size limit as "%[…]" references, and
// delivers the outgoing messages of its channels in order — split at "@br"
// by the agent, with a short human-like pause between parts, the outgoing
// mention and reply notation rendered for the platform.
//
// Channels are "<bridge name>:group:<id>" and "<bridge name>:private:<id>";
// speakers are identified by "<bridge name>:<user id>" (the owner is
// "id:<bridge name>:<user id>" in permissions.owners), never by display
// name.
//
// The companion side is consumed through small interfaces declared here
// (Agent: store without a turn, answer over what is stored, note; Outbox:
// the durable, ordered outgoing messages of the bridge's channels). Time
// is injected through a Clock.
//
// It imports store (for the store-backed outbox), config and notation.
package bridge
