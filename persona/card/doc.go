// Package card reads and writes SillyTavern character cards and turns them
// into persona folders and back.
//
// # Cards
//
// A card is JSON: Character Card V1 (the six fields name, description,
// personality, scenario, first_mes, mes_example at the top), V2 ({"spec":
// "chara_card_v2", "spec_version": "2.0", "data": {…}}) or V3 ({"spec":
// "chara_card_v3", "spec_version": "3.0", "data": {…}}), on its own or
// base64-encoded in a PNG's text chunk: "chara" for V1 and V2, "ccv3" for
// V3 (which wins when both are there). Read takes either file; ReadChunks
// and TextOf read PNG chunks (tEXt, zTXt and iTXt); Card.PNG writes a V3
// card in a ccv3 chunk with a V2 copy in chara, both tEXt before IEND as
// SillyTavern writes them, so SillyTavern and older readers can import it.
// V3 assets embedded in a PNG ("chara-ext-asset_:path" chunks) are read and
// written back. A CharX (ReadCharX: a zip with card.json and the assets its
// "embeded://" URIs name, as RisuAI writes it) is read too; its assets
// become embedded ones. What a card holds that cyan does not carry out —
// regex and helper scripts, RisuAI's module.risum and trigger scripts, a
// linked World Info it does not embed, unknown extensions — is kept in
// card.json and named in the folder's notes, one line each.
//
// Bad cards are errors that say what is wrong: not a PNG or JSON, no card
// chunk, broken base64 or JSON (with line and column), an unknown spec or
// spec_version, a field of the wrong type, a field over its limit (with
// the limit), a lorebook entry that could never fire (see package
// lorebook). A spec_version newer than 3.0 is read, with a note.
//
// # Persona folders
//
// ToFolder makes a persona folder of a card, FromFolder a card of a
// folder; FromFolder(ToFolder(c)) gives back the card's content, and
// importing that again gives the same folder:
//
//	persona.md     name (the nickname when the card has one), description
//	               (creator_notes), the reference and lorebook files, and
//	               variables: the built-in persona's, and the greetings
//	               first_mes, alternate_greetings, group_only_greetings;
//	               the Character's Note (extensions.depth_prompt) as
//	               depth_prompt: {text, depth, role};
//	               then the root prompt: the card's system_prompt,
//	               description, personality and scenario under their own
//	               headings ("# Instructions", "# ${agent_name}",
//	               "# ${agent_name}'s personality", "# Scenario"),
//	               "# Example conversations" introducing the reference, and
//	               post_history_instructions last ("# Final instructions").
//	examples.txt   mes_example, the persona's reference
//	lorebook.json  character_book, as the card held it
//	avatar/        neutral.png: the card's picture, its card chunks taken
//	               out (the page's face); and the V3 "emotion" assets by
//	               cyan's emotion (persona.EmotionOf: joy → happy.png)
//	assets/…       embedded assets (PNG chunks, CharX files)
//	card.json      what the card holds that the persona does not use
//	               (tags, creator, character_version, extensions, assets,
//	               source, creation_date, fields of newer versions), so that
//	               an export gives it back; an export stamps its own
//	               modification_date
//
// In the texts, {{char}} (and <BOT>, <CHAR>) becomes ${agent_name} and
// {{user}} (and <USER>) ${user}, the current speaker; a literal "${" is
// escaped; {{original}} is taken out (cyan's rules are always in the
// prompt). The reference is plain text, so there {{char}} is the name and
// {{user}} "User". A line of card text that reads like one of the headings
// gets "${nothing = }" before it (it renders as nothing), so an export
// still finds the sections.
//
// cyan renders the platform part of the system prompt (notation, tools,
// system info) around every persona, so the root prompt holds only the
// character; what it takes from the built-in persona (builtinPlatform) is
// its variables and the place of its few-shot section, which a card's
// example conversations replace.
//
// The card's texts become the persona's own prompt, as if its owner had
// written them: they are not escaped like untrusted text. Lorebook entries
// are (package lorebook).
//
// It may import persona and persona/lorebook.
package card
