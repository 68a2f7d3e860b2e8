// Package packets owns what crosses a component boundary (SPEC §5): the
// nl_packet in its two forms — the natural packet {aim, scene, appendix,
// output_text_limit, output_file_limit} and the action packet, a plain
// object of parameters — the result {output_text, output_file} with the
// seed's limits, the value types parts share (a prompt section's item, an
// observer's status, the speech segment {emotion, language, text} that the
// voice speaks and the router carries), the one tool convention (tool.go:
// ToolSpec, Tool, ToolCall, Caller — how every part exports its tools to
// the registry in package tools), the knowledge scopes (Scope) and the one
// reader of a turn (Reader: who it acts for, what they may see, and the
// audience that caps what it shows; Private, the one "is it private"
// rule), and the permission object {tools, infos, self_edit,
// distribute_permission} with ISDK's rule language. The router that takes outgoing packets to
// components is package router.
//
// The permission object lives here rather than in tools because every
// component carries one and config validates it (config may import only
// packets, glob and clock); tools, limitproc and the observers all
// evaluate it.
//
// Everything here is JSON-serialisable. Its rules match tool names and
// paths with package glob, the one matcher. It may import glob. Every
// other package may depend on it.
package packets
