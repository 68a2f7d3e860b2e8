// Package lorebook reads the lorebooks of character cards (the
// character_book of Character Card V2 and V3, and the lorebook_v3 file) and
// decides, each turn, which of their entries enter the prompt.
//
// A lorebook is a list of entries; an entry holds text (its content) and the
// keys that bring it in: when a key appears in the recent conversation, the
// content is put into the prompt, within a token budget, in the entries'
// insertion order. Parse checks a book and keeps it read-only; Activate runs
// one scan and says, for every entry that matched, whether it fired and why;
// Source holds the persona's book (parsed once per persona, the last good
// one kept over a broken reload) and fills the prompt's two lorebook slots
// from one scan a turn.
//
// # Semantics
//
// The fields are the specs' (malfoyslastname/character-card-spec-v2,
// kwaroran/character-card-spec-v3), and where the specs leave a point open
// the package does what SillyTavern's world-info.js does, because that is
// what the cards' authors tested against:
//
//   - keys and secondary_keys: an entry matches when one of its keys is in
//     the scanned text. With selective set and secondary keys present, the
//     secondary keys must also satisfy the entry's logic
//     (extensions.selectiveLogic): 0 AND ANY (one of them is present), 1 NOT
//     ALL (at least one is absent), 2 NOT ANY (none is present), 3 AND ALL
//     (all are present). Secondary keys are honoured whatever use_regex says
//     (SillyTavern writes use_regex: true on every entry it exports).
//   - matching is case-insensitive unless case_sensitive (the entry field,
//     or extensions.case_sensitive, which wins when set). With
//     extensions.match_whole_words a one-word key matches only between
//     non-word characters, where a word character is an ASCII letter, digit
//     or '_' as in JavaScript's \W (so a Chinese key still matches inside
//     Chinese text); a key of several words matches as a phrase.
//   - a key written "/pattern/flags" is a regular expression (flags i, s and
//     m are honoured); with use_regex, a key that holds regular-expression
//     syntax and compiles is one too. Go's RE2 syntax is used: a pattern it
//     cannot compile (look-around, back-references) is matched as plain text
//     when use_regex brought it in, and never matches in the "/…/" form; the
//     book's Warnings say which.
//   - {{char}}, <BOT>, <CHAR> and {{user}}, <USER> (any case) in keys and
//     content are replaced by the character's and the current speaker's
//     names.
//   - constant entries always fire; disabled entries (enabled: false) never.
//   - probability: with extensions.useProbability (default true) and
//     extensions.probability below 100, an entry that matched fires when a
//     roll in [0, 100) is at most its probability. The randomness is the
//     caller's (Input.Rand), so tests are deterministic.
//   - scan depth: the book's scan_depth (default 2) newest messages are
//     scanned, or the entry's own (extensions.scan_depth, @@scan_depth). 0
//     scans nothing: only constant entries fire.
//   - recursion: when the book's recursive_scanning is true, the content of
//     the entries that fired is scanned too, pass after pass, until no new
//     entry fires. extensions.exclude_recursion keeps an entry from being
//     fired by another's content, prevent_recursion keeps an entry's content
//     from firing others, delay_until_recursion lets an entry fire only from
//     another's content (all levels count as one).
//   - token budget: the smaller of the caller's budget and the book's
//     token_budget (Source gives the book its token_budget, or
//     SillyTavern's default share, 25 %, of the model's context window —
//     of agent.context_budget when the window is not known: Book.Room).
//     Constant entries are kept first, then in order of priority (the
//     entry's priority when set, else its insertion_order), higher first; an entry
//     that does not fit is left out and the rest are still tried; once one
//     did not fit, recursion stops.
//   - position: before_char (SillyTavern position 0) entries go before the
//     character's definition, all others after it; SillyTavern's other
//     positions (author's note, example messages, @depth) have no place of
//     their own in cyan's prompt and go after, which the trace says.
//   - V3 decorators at the top of the content ("@@name value" lines) are
//     taken out of it. Honoured: @@activate, @@dont_activate, @@scan_depth,
//     @@position (before_desc → before, others after), @@additional_keys,
//     @@exclude_keys; a "@@@" fallback line applies when the decorator just
//     above it is not honoured. Others are ignored.
//   - not honoured: SillyTavern's timed effects (sticky, cooldown, delay),
//     inclusion groups and vector matching; their fields are kept.
//
// SillyTavern's World Info files ({"entries": {"<uid>": {…}}}, the entries'
// fields named key, keysecondary, order, disable…) are read too:
// FromWorldInfo turns one into a character_book, and Parse reads either.
// Chub's lorebook downloads carry the character_book's names of the same
// fields beside the World Info ones (keys beside key…): the World Info
// field wins, as in SillyTavern (a copy that differs is noted), and the
// other is read where the World Info field is missing.
// So is RisuAI's lorebook export ({"type": "risu", "ver": 1, "data": […]},
// keys as comma-separated text), entry for entry as RisuAI writes its
// lorebook into a card; and so is a RisuAI module (.risum, RisuAI's binary
// file of a lorebook with regex and trigger scripts): its lorebook is read,
// and its scripts named in notes, one line each.
//
// Bad books are errors that say which entry and what to do: not JSON, a
// field of the wrong type, sizes over the limits below. An enabled entry
// that is neither constant nor has a key (it could never fire) is not an
// error: it is read disabled, and Warnings say so, so one entry never
// costs the whole book.
//
// Content is escaped like any untrusted text before it enters a prompt.
//
// It may import notation.
package lorebook
