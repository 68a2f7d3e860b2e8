// Package tools is the tool executor (SPEC §5): a registry of process
// tools (action packets, no LLM) and natural tools (natural packets, run
// as prompt scripts through the Scripts interface the daemon fills with the
// script library), the built-ins read_file, write_file, terminal,
// speak and system_operation, extra tools from manifest folders
// (tools/extra/default, provided, custom) watched while the daemon runs,
// tools of MCP servers, and the permission checks every call passes:
// permission objects (package packets) chosen by who is speaking, drawn
// from the effects every tool must declare; paths confined to the
// configured roots through os.Root (Paths), and a component's folder the
// same way (Folder, folder.go) — the only ways a tool reads a file, which
// a source scan test holds; credential files by kind and private keys by
// content refused everywhere (Secrets, tools.secrets); commands run in
// their own process group with a timeout, an output cap and a scrubbed
// environment, inside a bubblewrap jail that shows them only the roots
// (Jail, sandbox.go, which says why bubblewrap and not Landlock), under
// memory, process and CPU-time limits (Limits); and calls parked for the
// owner's approval. A component may carry a
// permission object of its own (SetComponent: an observer, bounded by its
// starter's), and Reader resolves a caller into the one reader of its
// turn (packets.Reader: whether it is the owner, by id, its permission
// object, and its audience — everyone else's permission object unless the
// owner is alone in the conversation), which says what of the agent's
// knowledge it may see and change (packets.Scope). The audience caps every
// call: one the reader may make and its audience may not (a file read, a
// component, a custom tool, in a group), or one whose run meets data the
// audience may not read (packets.Reader.Withheld), is parked for the
// owner's confirmation, its rule saying where the result would be posted;
// a confirmed call runs uncapped. The open tool opens any %[...]
// reference through openers the daemon registers; the component tools
// read a component's main.md (a read: guests are denied it, and custom
// tool manifests are the owner's alone) and edit it under self_edit.
//
// Every part exports its tools the one way, as packets.Tool values (a
// packets.ToolSpec — name, description, JSON-schema parameters, kind,
// effects — and a run function that takes a *packets.ToolCall, the caller
// as the registry resolved it), and the daemon hands each part's list to
// Registry.RegisterAll in one loop; the effects decide what non-owners may
// call, and a part may say a tool is not offered to a caller now
// (packets.Tool.Offered). What a turn's call opens goes to the pulled-info
// area (Options.Pull).
//
// A speak text's language is guessed with tts.LanguageOf. Turns is the
// registry as main-virtual's turns use it (the turn's reader, resolved
// once when it starts; offer and call as that reader; the outcome as a
// turn keeps it).
//
// It may import store, llm, config, packets, persona, notation, journal,
// backoff, tts, glob and turn.
package tools
