package script

import (
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The ISDK constructs this layer does not run. Each is an error at check
// and at load, with the file and line, never text sent to the model
// (ISDK language spec: "String Prefix Conventions", "Advanced Script
// Invocation Formatting", "Chains Invocation", "Dynamically Adjusting
// Generation Probability", "Import", "Export", "Prompt configuration").

// isdkFrontKeys are ISDK front-matter keys that scripts here do not
// support, with what each would have done.
var isdkFrontKeys = map[string]string{
	"import":                      "imports of code and other scripts",
	"export":                      "exported functions",
	"$initializeExec":             "an initialization function",
	"runSelfBeforeInitializeExec": "an initialization function",
	"_id":                         "a script id (use name:)",
	"type":                        "script types",
	"templateFormat":              "template formats other than Jinja",
	"contentType":                 "content types",
	"modelPattern":                "model patterns",
	"prompt":                      "prompt configuration (put messages in the body; parameters in parameters:)",
	"completion_delimiter":        "completion delimiters",
	"llmStream":                   "streaming settings",
	"autoRunLLMIfPromptAvailable": "running the model implicitly",
	"forceJson":                   "forced JSON (declare output: instead)",
	"shouldAppendResponse":        "appending responses",
	"disableLlmRequest":           "request events",
	"shouldThink":                 "thought modes (use generate: {think: true})",
	"$on":                         "event handlers",
}

// unsupportedTags reports the YAML nodes with a local tag — ISDK's !fn
// function blocks and any other "!tag": code this layer cannot run. A
// node under a reported one is not reported again.
func (d *decl) unsupportedTags(n *yaml.Node, line0 int) []error {
	if n == nil {
		return nil
	}
	if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
		if n.Tag == "!fn" {
			return []error{d.at(n, line0).errorf("!fn function blocks are not supported: a script cannot run code; remove the block (a natural tool that needs code is an extra tool with run: {argv: …})")}
		}
		return []error{d.at(n, line0).errorf("the YAML tag %s is not supported; scripts take plain text, lists and mappings", n.Tag)}
	}
	var errs []error
	for _, c := range n.Content {
		errs = append(errs, d.unsupportedTags(c, line0)...)
	}
	return errs
}

// lostAfterBlock reports the first line YAML would silently drop after a
// block text (| or >) that is the whole body: a line at the left margin
// after it is not part of the text, and the parser ignores it.
func (d *decl) lostAfterBlock(n *yaml.Node, body string, line0 int) error {
	if n == nil || n.Kind != yaml.ScalarNode || n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) == 0 {
		return nil
	}
	lines := strings.Split(body, "\n")
	for i := n.Line; i < len(lines); i++ { // n.Line is 1-based: start after the header line
		l := lines[i]
		if l == "" || l[0] == ' ' || l[0] == '\t' || l[0] == '#' {
			continue
		}
		return place{file: d.file, line: i + 1 + line0, col: 1}.errorf("this line is outside the text block above it and would be lost; write the messages as \"role: text\" lines")
	}
	return nil
}

var (
	// scriptCall is ISDK's [[@script(…)]] and [[$directive]] inside a text.
	scriptCall = regexp.MustCompile(`\[\[\s*[@$][^\]]*\]\]`)
	// biasSyntax is ISDK's ((text:bias)) and ((!text:bias)) generation
	// probability: a number, a percentage (the seed's own ((happy:20%))),
	// false or never.
	biasSyntax = regexp.MustCompile(`\(\(!?[^()]*:\s*([-+]?[0-9.]+\s*%?|false|never)\s*\)\)`)
	// regexReplace is ISDK's [[/RegExp/opts:VAR]] replacement.
	regexReplace = regexp.MustCompile(`\[\[\s*/.*?/[a-z]*\s*:\s*[A-Za-z_]\w*(\s*:[^\]]*)?\]\]`)
	// midChain is a chain inside a text: "… -> translator(…)", "… ->
	// $print", "[[AI]] -> next" (an arrow between two words of prose is
	// not one).
	midChain = regexp.MustCompile(`(\]\]\s*->\s*\S|->\s*\$[A-Za-z_]|->\s*@?[A-Za-z_][\w.-]*\()`)
	// addressing is ISDK's group-chat addressing at a message's start:
	// "@dobby, …", "@dobby(PM), @other, …".
	addressing = regexp.MustCompile(`^@[\p{L}\w-]+(\((PM|DM|私)\))?\s*(,|，)`)
)

// unsupportedText reports ISDK syntax inside a message's text that this
// layer would otherwise send to the model as it is: the string prefixes
// ?= (an expression), #: and #+ (message edits), ~ and ! before a template
// (formatting control), a chain "-> …" (at a line's start or inside the
// text), group-chat addressing "@dobby(PM), …", script and directive calls
// [[@…]] [[$…]], regular-expression replacement [[/re/:VAR]], and
// ((text:bias)) in every form. It returns "" when there is none.
func unsupportedText(text string) string {
	t := strings.TrimSpace(text)
	switch {
	case strings.HasPrefix(t, "?="):
		return "ISDK expressions (?=…) are not supported: the text would be sent as it is"
	case strings.HasPrefix(t, "#:") || strings.HasPrefix(t, "#+"):
		return "ISDK message edits (#: and #+) are not supported: write the message itself"
	case strings.HasPrefix(t, "~{{") || strings.HasPrefix(t, "!{{"):
		return "ISDK formatting prefixes (~ and ! before a template) are not supported: every text is a template formatted when it is sent; remove the prefix"
	case strings.HasPrefix(t, "->"):
		return "ISDK chains (-> script -> $directive) are not supported: a script is role messages only"
	}
	for _, line := range strings.Split(t, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "-> ") || strings.HasPrefix(strings.TrimSpace(line), "->$") {
			return "ISDK chains (-> script -> $directive) are not supported: a script is role messages only"
		}
	}
	if m := addressing.FindString(t); m != "" {
		return "ISDK group-chat addressing (" + strings.TrimRight(m, ",，") + ", …) is not supported: a script's messages go to the one model"
	}
	if m := midChain.FindString(t); m != "" {
		return "ISDK chains (" + m + "…) are not supported: a script is role messages only"
	}
	if m := regexReplace.FindString(t); m != "" {
		return "ISDK regular-expression replacement " + m + " is not supported: use the site's value in a template ({{ NAME }}) instead"
	}
	if m := scriptCall.FindString(t); m != "" {
		return "ISDK script and directive calls such as " + m + " are not supported: a script cannot call another or run directives"
	}
	if m := biasSyntax.FindString(t); m != "" {
		return "ISDK generation bias " + m + " is not supported"
	}
	return ""
}
