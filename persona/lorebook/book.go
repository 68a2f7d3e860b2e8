package lorebook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits of a book. A card or file past them is refused with the limit in
// the message.
const (
	MaxBookBytes    = 16 << 20  // the book's JSON
	MaxEntries      = 5000      // entries in a book
	MaxContentBytes = 128 << 10 // one entry's content
	MaxKeys         = 256       // keys (and secondary keys) of one entry
	MaxKeyBytes     = 1024      // one key
	MaxScanDepth    = 1000      // messages a scan may look back
)

// DefaultScanDepth is how many of the newest messages are scanned when the
// book does not say (SillyTavern's default).
const DefaultScanDepth = 2

// Logic is how an entry's secondary keys combine (SillyTavern's
// world_info_logic).
type Logic int

const (
	AndAny Logic = iota // one secondary key is present
	NotAll              // at least one secondary key is absent
	NotAny              // no secondary key is present
	AndAll              // every secondary key is present
)

func (l Logic) String() string {
	switch l {
	case NotAll:
		return "NOT ALL"
	case NotAny:
		return "NOT ANY"
	case AndAll:
		return "AND ALL"
	}
	return "AND ANY"
}

// Position is where a fired entry goes: before or after the character's
// definition.
type Position int

const (
	After Position = iota
	Before
)

// stPositions names SillyTavern's extensions.position values.
var stPositions = map[int]string{0: "before the character", 1: "after the character", 2: "top of the author's note",
	3: "bottom of the author's note", 4: "at a depth in the chat", 5: "above the example messages", 6: "below the example messages"}

// Book is a parsed lorebook. It is read-only once parsed, and safe for
// concurrent Activate calls.
type Book struct {
	Name, Description string
	// ScanDepth is the book's scan_depth (DefaultScanDepth when absent).
	ScanDepth int
	// TokenBudget is the book's token_budget (0: none of its own).
	TokenBudget int
	// Recursive is the book's recursive_scanning.
	Recursive bool
	Entries   []*Entry
	// Warnings are what Parse could not honour (a key that is not a valid
	// regular expression), for the person importing the book.
	Warnings []string
}

// Entry is one lorebook entry.
type Entry struct {
	Index         int    // its place in the book, from 0
	ID            string // the entry's id, or its index when it has none
	Name, Comment string

	Keys, SecondaryKeys []key
	// Content is the text that enters the prompt, decorators taken out.
	Content   string
	Enabled   bool
	Constant  bool
	Selective bool
	Logic     Logic
	// Order is insertion_order: lower is placed higher in the prompt.
	Order float64
	// Priority is the entry's priority, when set: under the token budget
	// lower is dropped first (else Order decides).
	Priority      *float64
	Position      Position
	PositionNote  string // how the card's position maps to Position, when it is not plain
	CaseSensitive bool
	WholeWords    bool
	UseRegex      bool
	// Probability is a percentage; it applies when UseProbability.
	Probability    float64
	UseProbability bool
	// ScanDepth overrides the book's when set (-1: not set).
	ScanDepth           int
	ExcludeRecursion    bool
	PreventRecursion    bool
	DelayUntilRecursion bool

	// Decorator effects.
	activate, dontActivate bool
	additional, exclude    []key
}

// Label names the entry for people: its id and its comment or name.
func (e *Entry) Label() string {
	s := "entry " + e.ID
	switch {
	case e.Comment != "":
		s += " (" + e.Comment + ")"
	case e.Name != "":
		s += " (" + e.Name + ")"
	}
	return s
}

// key is one key of an entry: plain text, or a regular expression.
type key struct {
	orig  string // as written in the book
	text  string
	re    *regexp.Regexp // compiled when the key has no macro
	regex bool           // the key is a regular expression
	macro bool           // the key holds {{char}} or {{user}}: substituted, then compiled, per scan
	flags string         // Go flags of a "/…/flags" key, "(?i)" style
}

// rawBook is the JSON of a character_book. Fields that are not checked are
// left out: the book's file is kept as it is.
type rawBook struct {
	Name              json.RawMessage `json:"name"`
	Description       json.RawMessage `json:"description"`
	ScanDepth         json.RawMessage `json:"scan_depth"`
	TokenBudget       json.RawMessage `json:"token_budget"`
	RecursiveScanning json.RawMessage `json:"recursive_scanning"`
	Entries           json.RawMessage `json:"entries"`
	Spec              string          `json:"spec"`
	Data              json.RawMessage `json:"data"`
}

type rawEntry struct {
	Keys           json.RawMessage            `json:"keys"`
	Key            json.RawMessage            `json:"key"` // SillyTavern's own world files
	Content        json.RawMessage            `json:"content"`
	Extensions     map[string]json.RawMessage `json:"extensions"`
	Enabled        json.RawMessage            `json:"enabled"`
	InsertionOrder json.RawMessage            `json:"insertion_order"`
	CaseSensitive  json.RawMessage            `json:"case_sensitive"`
	UseRegex       json.RawMessage            `json:"use_regex"`
	Constant       json.RawMessage            `json:"constant"`
	Name           json.RawMessage            `json:"name"`
	Priority       json.RawMessage            `json:"priority"`
	ID             json.RawMessage            `json:"id"`
	Comment        json.RawMessage            `json:"comment"`
	Selective      json.RawMessage            `json:"selective"`
	SecondaryKeys  json.RawMessage            `json:"secondary_keys"`
	Position       json.RawMessage            `json:"position"`
}

// Parse reads a lorebook: a character_book object, or a lorebook_v3 file
// ({"spec": "lorebook_v3", "data": {…}}).
func Parse(data []byte) (*Book, error) {
	if len(data) > MaxBookBytes {
		return nil, fmt.Errorf("lorebook: the book is %d bytes; the limit is %d", len(data), MaxBookBytes)
	}
	var notes []string
	if IsWorldInfo(data) {
		var err error
		if data, notes, err = FromWorldInfo(data, ""); err != nil {
			return nil, fmt.Errorf("lorebook: %w", err)
		}
	}
	var rb rawBook
	if err := strictObject(data, &rb); err != nil {
		return nil, fmt.Errorf("lorebook: %w", err)
	}
	if rb.Spec != "" {
		if rb.Spec != "lorebook_v3" {
			return nil, fmt.Errorf("lorebook: unknown spec %q: a lorebook file is {\"spec\": \"lorebook_v3\", \"data\": {…}} or a character_book object", rb.Spec)
		}
		return Parse(rb.Data)
	}
	b := &Book{ScanDepth: DefaultScanDepth, Warnings: notes}
	var err error
	if b.Name, err = optText(rb.Name); err != nil {
		return nil, fmt.Errorf("lorebook: name: %w", err)
	}
	if b.Description, err = optText(rb.Description); err != nil {
		return nil, fmt.Errorf("lorebook: description: %w", err)
	}
	if n, ok, err := optNumber(rb.ScanDepth); err != nil {
		return nil, fmt.Errorf("lorebook: scan_depth: %w", err)
	} else if ok {
		if n < 0 || n > MaxScanDepth {
			return nil, fmt.Errorf("lorebook: scan_depth %v: want 0 to %d messages", n, MaxScanDepth)
		}
		b.ScanDepth = int(n)
	}
	if n, ok, err := optNumber(rb.TokenBudget); err != nil {
		return nil, fmt.Errorf("lorebook: token_budget: %w", err)
	} else if ok && n > 0 {
		b.TokenBudget = int(math.Min(n, math.MaxInt32))
	}
	if b.Recursive, err = optBool(rb.RecursiveScanning, false); err != nil {
		return nil, fmt.Errorf("lorebook: recursive_scanning: %w", err)
	}
	var entries []json.RawMessage
	if len(rb.Entries) == 0 || isNull(rb.Entries) {
		return nil, errors.New("lorebook: entries: missing (a book needs \"entries\": […], which may be empty)")
	}
	if err := json.Unmarshal(rb.Entries, &entries); err != nil {
		return nil, fmt.Errorf("lorebook: entries: want a list of entries: %w", err)
	}
	if len(entries) > MaxEntries {
		return nil, fmt.Errorf("lorebook: %d entries; the limit is %d", len(entries), MaxEntries)
	}
	for i, raw := range entries {
		e, warn, err := parseEntry(i, raw)
		if err != nil {
			return nil, fmt.Errorf("lorebook: %w", err)
		}
		b.Warnings = append(b.Warnings, warn...)
		b.Entries = append(b.Entries, e)
	}
	return b, nil
}

func parseEntry(i int, raw json.RawMessage) (*Entry, []string, error) {
	where := fmt.Sprintf("entry %d", i)
	var re rawEntry
	if err := strictObject(raw, &re); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", where, err)
	}
	e := &Entry{Index: i, ID: strconv.Itoa(i), ScanDepth: -1}
	var err error
	fail := func(field string, err error) (*Entry, []string, error) {
		return nil, nil, fmt.Errorf("%s: %s: %w", e.Label(), field, err)
	}
	if len(re.ID) > 0 && !isNull(re.ID) {
		var id any
		if json.Unmarshal(re.ID, &id) == nil {
			switch v := id.(type) {
			case string:
				e.ID = v
			case float64:
				e.ID = strconv.FormatFloat(v, 'f', -1, 64)
			}
		}
	}
	if e.Comment, err = optText(re.Comment); err != nil {
		return fail("comment", err)
	}
	if e.Name, err = optText(re.Name); err != nil {
		return fail("name", err)
	}
	ext := re.Extensions
	if e.Content, err = optText(re.Content); err != nil {
		return fail("content", err)
	}
	if len(e.Content) > MaxContentBytes {
		return fail("content", fmt.Errorf("%d bytes; the limit is %d (split the entry)", len(e.Content), MaxContentBytes))
	}
	if e.Enabled, err = optBool(re.Enabled, true); err != nil {
		return fail("enabled", err)
	}
	if e.Constant, err = optBool(re.Constant, false); err != nil {
		return fail("constant", err)
	}
	if e.Selective, err = optBool(re.Selective, false); err != nil {
		return fail("selective", err)
	}
	if e.UseRegex, err = optBool(re.UseRegex, false); err != nil {
		return fail("use_regex", err)
	}
	if e.Order, _, err = optNumber(re.InsertionOrder); err != nil {
		return fail("insertion_order", err)
	}
	if p, ok, err := optNumber(re.Priority); err != nil {
		return fail("priority", err)
	} else if ok {
		e.Priority = &p
	}
	if e.CaseSensitive, err = optBool(re.CaseSensitive, false); err != nil {
		return fail("case_sensitive", err)
	}
	if v, ok := ext["case_sensitive"]; ok && !isNull(v) {
		if e.CaseSensitive, err = optBool(v, false); err != nil {
			return fail("extensions.case_sensitive", err)
		}
	}
	if e.WholeWords, err = optBool(ext["match_whole_words"], false); err != nil {
		return fail("extensions.match_whole_words", err)
	}
	if l, ok, err := optNumber(ext["selectiveLogic"]); err != nil {
		return fail("extensions.selectiveLogic", err)
	} else if ok {
		if l < 0 || l > 3 || l != math.Trunc(l) {
			return fail("extensions.selectiveLogic", fmt.Errorf("%v: want 0 (AND ANY), 1 (NOT ALL), 2 (NOT ANY) or 3 (AND ALL)", l))
		}
		e.Logic = Logic(l)
	}
	e.Probability = 100
	if p, ok, err := optNumber(ext["probability"]); err != nil {
		return fail("extensions.probability", err)
	} else if ok {
		e.Probability = p
	}
	if e.UseProbability, err = optBool(ext["useProbability"], true); err != nil {
		return fail("extensions.useProbability", err)
	}
	if d, ok, err := optNumber(ext["scan_depth"]); err != nil {
		return fail("extensions.scan_depth", err)
	} else if ok {
		e.ScanDepth = clampDepth(d)
	}
	if e.ExcludeRecursion, err = optBool(ext["exclude_recursion"], false); err != nil {
		return fail("extensions.exclude_recursion", err)
	}
	if e.PreventRecursion, err = optBool(ext["prevent_recursion"], false); err != nil {
		return fail("extensions.prevent_recursion", err)
	}
	if e.DelayUntilRecursion, err = optBool(ext["delay_until_recursion"], false); err != nil {
		// SillyTavern also writes a level number here.
		n, ok, nerr := optNumber(ext["delay_until_recursion"])
		if nerr != nil {
			return fail("extensions.delay_until_recursion", err)
		}
		e.DelayUntilRecursion = ok && n > 0
	}
	if err := e.position(re.Position, ext["position"]); err != nil {
		return fail("position", err)
	}

	keysRaw := re.Keys
	if len(keysRaw) == 0 || isNull(keysRaw) {
		keysRaw = re.Key
	}
	keys, err := optTexts(keysRaw)
	if err != nil {
		return fail("keys", err)
	}
	secondary, err := optTexts(re.SecondaryKeys)
	if err != nil {
		return fail("secondary_keys", err)
	}
	var warn []string
	if e.Keys, err = e.compileKeys(keys, &warn); err != nil {
		return fail("keys", err)
	}
	if e.SecondaryKeys, err = e.compileKeys(secondary, &warn); err != nil {
		return fail("secondary_keys", err)
	}
	e.decorate(&warn)
	if e.Enabled && !e.Constant && !e.activate && len(e.Keys) == 0 {
		e.Enabled = false
		warn = append(warn, e.Label()+" has no keys and is not constant, so it could never fire: it was imported disabled (give it keys or make it constant to use it)")
	}
	warn = append(warn, unhonoured(e, ext)...)
	return e, warn, nil
}

// position reads the spec's position ("before_char" | "after_char") and
// SillyTavern's extensions.position, which wins when set.
func (e *Entry) position(spec, st json.RawMessage) error {
	if n, ok, err := optNumber(spec); err == nil && ok && JSONKind(spec) == "a number" {
		// Some tools write SillyTavern's number in the spec's field.
		if len(st) == 0 || isNull(st) {
			st = spec
		}
		spec = nil
		_ = n
	}
	p, err := optText(spec)
	if err != nil {
		return err
	}
	switch p {
	case "before_char":
		e.Position = Before
	case "", "after_char":
	default:
		e.PositionNote = fmt.Sprintf("position %q is not before_char or after_char: placed after the character", p)
	}
	n, ok, err := optNumber(st)
	if err != nil {
		return fmt.Errorf("extensions.position: %w", err)
	}
	if !ok {
		return nil
	}
	e.PositionNote = ""
	switch n {
	case 0:
		e.Position = Before
	case 1:
		e.Position = After
	default:
		e.Position = After
		name := stPositions[int(n)]
		if name == "" || n != math.Trunc(n) {
			name = fmt.Sprintf("position %v", n)
		}
		e.PositionNote = "SillyTavern places it " + name + "; cyan places it after the character"
	}
	return nil
}

// compileKeys checks keys and compiles the regular expressions among them.
func (e *Entry) compileKeys(texts []string, warn *[]string) ([]key, error) {
	if len(texts) > MaxKeys {
		return nil, fmt.Errorf("%d keys; the limit is %d", len(texts), MaxKeys)
	}
	var out []key
	for _, t := range texts {
		if len(t) > MaxKeyBytes {
			return nil, fmt.Errorf("a key of %d bytes; the limit is %d", len(t), MaxKeyBytes)
		}
		if strings.TrimSpace(t) == "" {
			continue
		}
		k, note := newKey(strings.TrimSpace(t), e.UseRegex, e.CaseSensitive)
		if note != "" {
			*warn = append(*warn, e.Label()+": "+note)
		}
		out = append(out, k)
	}
	return out, nil
}

// slashRE is SillyTavern's "/pattern/flags" form of a regular-expression
// key.
var slashRE = regexp.MustCompile(`^/([\s\S]+?)/([gimsuy]*)$`)

// regexMeta are the characters that make a use_regex key more than text.
const regexMeta = `\.+*?()|[]{}^$`

// newKey makes a key; note says what could not be honoured.
func newKey(t string, useRegex, caseSensitive bool) (key, string) {
	k := key{orig: t, text: t, macro: hasMacro(t)}
	pattern, flags := "", ""
	if m := slashRE.FindStringSubmatch(t); m != nil && !unescapedSlash(m[1]) {
		pattern = strings.ReplaceAll(m[1], `\/`, "/")
		for _, f := range m[2] {
			if f == 'i' || f == 's' || f == 'm' {
				flags += string(f)
			}
		}
		if flags != "" {
			flags = "(?" + flags + ")"
		}
	} else if useRegex && strings.ContainsAny(t, regexMeta) {
		pattern = t
		if !caseSensitive {
			flags = "(?i)"
		}
	} else {
		return k, ""
	}
	if k.macro {
		k.regex, k.flags, k.text = true, flags, pattern
		return k, ""
	}
	re, err := regexp.Compile(flags + pattern)
	if err != nil {
		if slashRE.MatchString(t) {
			k.regex, k.re = true, nil // never matches
			return k, fmt.Sprintf("key %q is not a regular expression cyan can run (%v); it never matches", t, err)
		}
		return k, fmt.Sprintf("key %q is not a regular expression cyan can run (%v); it is matched as text", t, err)
	}
	k.regex, k.re = true, re
	return k, ""
}

// unescapedSlash reports a "/" not preceded by "\" in a slash pattern, which
// SillyTavern refuses.
func unescapedSlash(p string) bool {
	for i := 0; i < len(p); i++ {
		if p[i] == '/' && (i == 0 || p[i-1] != '\\') {
			return true
		}
	}
	return false
}

// strictObject decodes a JSON object, with an error that says where the
// JSON breaks.
func strictObject(data []byte, v any) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return errors.New("want a JSON object {…}")
	}
	if err := json.Unmarshal(data, v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := position(data, se.Offset)
			return fmt.Errorf("broken JSON at line %d, column %d: %v", line, col, err)
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("%s: want %s, got %s", te.Field, te.Type, te.Value)
		}
		return err
	}
	return nil
}

func position(data []byte, off int64) (line, col int) {
	line, col = 1, 1
	for i := int64(0); i < off && i < int64(len(data)); i++ {
		if data[i] == '\n' {
			line, col = line+1, 1
		} else if utf8.RuneStart(data[i]) {
			col++
		}
	}
	return line, col
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// optText reads an optional string; null and absent are "".
func optText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || isNull(raw) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("want text, got %s", JSONKind(raw))
	}
	return s, nil
}

// optBool reads an optional boolean, also written "true"/"false" or 0/1.
func optBool(raw json.RawMessage, def bool) (bool, error) {
	if len(raw) == 0 || isNull(raw) {
		return def, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return def, err
	}
	switch x := v.(type) {
	case bool:
		return x, nil
	case float64:
		if x == 0 || x == 1 {
			return x == 1, nil
		}
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true":
			return true, nil
		case "false", "":
			return false, nil
		}
	}
	return def, fmt.Errorf("want true or false, got %s", JSONKind(raw))
}

// optNumber reads an optional number, also written as text.
func optNumber(raw json.RawMessage) (float64, bool, error) {
	if len(raw) == 0 || isNull(raw) {
		return 0, false, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return 0, false, err
	}
	switch x := v.(type) {
	case float64:
		return x, true, nil
	case string:
		if strings.TrimSpace(x) == "" {
			return 0, false, nil
		}
		if f, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			return f, true, nil
		}
	}
	return 0, false, fmt.Errorf("want a number, got %s", JSONKind(raw))
}

// optTexts reads a list of strings; a single string is split at commas
// (older lorebook tools wrote keys that way).
func optTexts(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || isNull(raw) {
		return nil, nil
	}
	var list []any
	if err := json.Unmarshal(raw, &list); err != nil {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return strings.Split(s, ","), nil
		}
		return nil, fmt.Errorf("want a list of texts, got %s", JSONKind(raw))
	}
	out := make([]string, 0, len(list))
	for _, v := range list {
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case float64:
			out = append(out, strconv.FormatFloat(x, 'f', -1, 64))
		case nil:
		default:
			return nil, errors.New("want a list of texts, got a list holding a list or an object")
		}
	}
	return out, nil
}

func clampDepth(d float64) int {
	switch {
	case d < 0:
		return 0
	case d > MaxScanDepth:
		return MaxScanDepth
	}
	return int(d)
}

// JSONKind names a JSON value's type for an error message ("text", "a
// list", "an object"…); the card decoder says the same.
func JSONKind(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "text"
	case '{':
		return "an object"
	case '[':
		return "a list"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
