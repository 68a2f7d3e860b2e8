// Package persona owns persona folders and the root-prompt template language:
// it parses a folder's persona.md (YAML front-matter, then the template),
// reads the files the template and the front-matter name, renders the root
// prompt (section 1 of the prompt packet) and the persona reference (section
// 2), watches a folder for edits, and embeds the built-in persona, 青蓝.
//
// Beside the standard library it uses go.yaml.in/yaml/v3 and
// github.com/fsnotify/fsnotify. It imports nothing of cyan's.
//
// # Persona folders
//
// A folder holds persona.md: front-matter between two lines of "---", then the
// template. The keys are name (required), description, color ("#1D75B3"),
// reference (a file in the folder: the few-shot style corpus), lorebook (a
// file in the folder: a character card's lorebook, read with the persona and
// parsed by package lorebook), depth_prompt ({text, depth, role}: a card's
// Character's Note, which main-virtual puts into the conversation depth
// messages from its end; ${agent_name} and ${user} in its text are the
// names) and variables, a map of values the template can use. Some variables are known and checked: developer_name, context_count
// (default 40), mini_full_context_count (default 6, at most context_count),
// work_mode (default false) and supported_formats; agent_name is always the
// persona's name; user is who the persona talks to ("user" unless the caller
// passes the current speaker). Any other name is the user's own. Unknown keys
// and bad values are errors with file, line and key.
//
// Greeting reads the variables first_mes, alternate_greetings,
// group_only_greetings and greeting_pick (see its doc): what the persona says
// when a new conversation opens. DefaultFS is the built-in persona's folder.
//
// PageChannelOf is the desktop page's channel with a persona — "desktop"
// for the built-in one, "desktop:<ID>" for a folder (ID: the slug of its
// name, Slug) — so each character has its own conversation; channel.go
// says why, and PageChannels makes a voice pattern of the page cover them
// all.
//
// Emotions lists cyan's emotions (the faces the page draws); EmotionOf maps
// other apps' expression names to them by a documented table (SillyTavern's
// 28 expression labels, V3 emotion assets' usual names): a card's emotion
// pictures and a sprite pack in a persona's avatar/ folder are read by it.
//
// # Template language
//
// Text is copied as it is, except for expressions in ${…}:
//
//	${name}                 the value of a variable; unknown is an error
//	${name = default}       the value, or the literal default (trimmed) when
//	                        the variable is missing or null
//	${name ? A : B}         A when name is true, else B; B may be left out
//	${!name ? A : B}        the same with the test reversed
//	${file_load(path)}      the content of a file in the persona folder
//
// Values are text, numbers, bools, times (as "2006-01-02 15:04 -07:00") or
// lists, rendered joined with ", ". A value is false when it is missing or
// null, false, a zero number, an empty list, or the text "", "false", "no",
// "off" or "0" in any case; everything else is true.
//
// The branches A and B of a conditional are template text: they may span
// lines and hold other expressions, conditionals too. The separator between
// them is chosen by one rule: if the branches hold a line with only ":" on it
// (blanks around it allowed), the first such line is the separator; otherwise
// the first ":" that is not inside a nested ${…} is. Every other ":" is text,
// so
//
//	${work_mode ?
//	    Note: finish small tasks.
//	    :
//	    Note: small talk is fine.
//	}
//
// splits at the middle line. A '}' ends the conditional, so inside branches
// "\:" is a literal ':' and "\}" a literal '}'. Everywhere "\${" is a literal
// "${" (so a literal "${b}" in a branch is written "\${b\}"); a '}' outside
// any expression is ordinary text. The default of
// ${name = default} ends at the first '}', and "\}" puts a '}' in it.
//
// Whitespace: each branch is trimmed of blank space around it and dedented to
// the indentation its lines share. When a value, a branch or a loaded file
// spans lines, its following lines are indented like the output line it
// starts on, so the indented multi-line style above renders naturally. A
// conditional alone on its lines that renders nothing leaves no empty line.
//
// file_load inserts the file literally, less the newline that ends its last
// line: its text is not evaluated as a template. The path is relative to the
// persona folder, with '/' between names, and may be quoted; absolute paths,
// paths that leave the folder with "..", and (for a folder on disk, read
// through os.Root) symbolic links that lead outside it are refused. Files are
// read once, when the persona is loaded, and kept.
//
// Every syntax and render error is an *Error naming the file, line and
// column (in runes) of the "${" of the expression.
package persona
