// Package script runs prompt scripts, an ISDK subset: files named
// "*.ai.yaml" that declare a natural tool — its inputs, its output's JSON
// Schema, its model parameters — and the role messages that ask for it,
// with Jinja templates and generation sites. Every call a script makes is
// a generate call, validated and traced.
//
// It may import generate and llm.
//
// # Files
//
// An optional front-matter between two "---" lines, then the messages:
//
//	---
//	name: classify          # default: the file's name without .ai.yaml
//	title: Classify an issue
//	description: …
//	input:                  # names, or names with settings
//	  - text: {required: true, type: string, description: the issue}
//	  - lang: {default: en, enum: [en, zh]}
//	output: {type: object, properties: {…}, required: […]}
//	parameters: {temperature: 0.2, max_tokens: 300}
//	generate: {attempts: 2, strict: false, think: false, debug: false}
//	use: [{source: text, label: issue, budget: 2000}]
//	extends: base           # a script name, or a file such as base.ai.yaml
//	---
//	system:
//	  background: You triage issues.
//	  content: Classify what you are given.
//	  notes: [Be brief.]
//	user: "{{ text }}"
//	assistant: "[[CATEGORY:|bug|feature|question]]"
//	user: How sure are you?
//	assistant: "[[CONFIDENCE]]"
//
// The messages are "role: text" lines (the keys may repeat) or a YAML list
// of them; a text alone is the user speaking. Roles are system, user and
// assistant. System messages come first; each is text (its content) or
// {background, content, notes}, and several merge by ISDK's rule:
// backgrounds joined, contents joined, notes gathered, rendered as
// background, content and a "Notes:" list.
//
// Every text is a Jinja template (github.com/nikolalohinski/gonja/v2):
// {{ var }}, {% if %}, {% for %}, filters. Variables are the inputs (a
// declared input without a value is null, so {% if lang %} works) and the
// values of the sites before; a name nobody defined is an error. Block tags
// on a line of their own leave no blank line. Templates cannot include
// other files.
//
// # Generation sites
//
// "[[NAME]]" in an assistant message is a generation site: one generate
// call that answers the user message before it (the earlier messages are
// its history, the merged system messages its system layer). Its result is
// stored as NAME, for the templates after it and in Result.Vars, and takes
// the site's place in the message. "[[NAME:|a|b|c]]" forces one of the
// options. A script without a site that ends with a user message gets an
// implied [[RESPONSE]] at the end. The first site also gets the context
// items of use: (each an input, or a dotted path into one, under its label
// and within its token budget); the last site, unless it is a choice, gets
// the output schema as its shape. The run's value is the last site's.
// Text around a site is not sent to the model as a prefill; it only
// frames the value in the dialogue.
//
// # What is not supported
//
// A script cannot run code, call other scripts or run directives. Each
// ISDK construct for those is an error at check and at load, naming the
// file, line and column — never text sent to the model (unsupported.go):
// !fn function blocks and any other local YAML tag; a line YAML would
// drop after a top-level text block; $ directives ($echo, $set, $on, …)
// and -> chains, as keys or in a text; [[@script]] and [[$directive]]
// calls and other [[…]] forms but a site (regular expressions,
// parameters, local random choice); the string prefixes ?= (expression),
// #: and #+ (message edits), ~ and ! before a template; ((text:bias));
// group-chat roles; and ISDK's front-matter keys (import, export,
// $initializeExec, prompt, type, templateFormat, shouldThink, …).
//
// # Inputs and output
//
// Inputs are checked before any call: a missing required input, a value
// of the wrong type or outside its enum, or (when inputs are declared) an
// unknown one is an *InputError naming the input. An input without a type
// takes any JSON value. The result is validated against output.
// parameters passes temperature and max_tokens on; any other parameter is
// ignored with a warning. generate: sets attempts, strict, think, debug,
// max_output and temperature for every site.
//
// # extends
//
// A script may extend another: the front-matter is deep-merged (the child
// wins; mappings such as output merge key by key; inputs merge by name),
// system messages merge, and the child's messages are appended to the
// parent's. A name is looked for in the script's own folder, then in the
// persona's scripts/, then among the built-in scripts — never the script
// itself, so a persona's compress.ai.yaml can extend the built-in
// compress.
//
// # The library
//
// The built-in natural tools ship embedded (builtin/*.ai.yaml); a file of
// the same name in the persona folder's scripts/ overrides one. A new
// natural tool is one more file there. Library.Run(ctx, name, inputs, …)
// runs one and returns the validated value and its trace ids.
//
// Every syntax error is an *Error naming the file, line and column.
package script
