package card

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/cyan-agent/cyan/persona"
)

// What cyan does with a card's extensions. Every extension is kept in
// card.json (so an export gives it back), but only depth_prompt (the
// Character's Note) changes what the character does; for every other one
// that would change it in the app that wrote it, the import says, one line
// each, that cyan left it out.

// quietExtensions are extensions that only tune the app's own screens or
// record where the card came from: kept, without a note.
var quietExtensions = map[string]bool{
	"talkativeness": true, // group-chat turn taking in SillyTavern
	"fav":           true, // SillyTavern's favourite star
	"text_color":    true,
	"depth_prompt":  true, // carried: the Character's Note
}

// DepthPrompt is SillyTavern's Character's Note (extensions.depth_prompt):
// text put into the chat at Depth messages from its end, as Role.
type DepthPrompt struct {
	Prompt string `json:"prompt"`
	Depth  int    `json:"depth"`
	Role   string `json:"role"`
}

// DepthPrompt reads the card's Character's Note; ok is false when the card
// has none (or an empty one).
func (c *Card) DepthPrompt() (d DepthPrompt, ok bool) {
	raw, found := c.Extensions["depth_prompt"]
	if !found {
		return d, false
	}
	var loose struct {
		Prompt string `json:"prompt"`
		Depth  any    `json:"depth"`
		Role   string `json:"role"`
	}
	if json.Unmarshal(raw, &loose) != nil || strings.TrimSpace(loose.Prompt) == "" {
		return d, false
	}
	d.Prompt, d.Role, d.Depth = loose.Prompt, loose.Role, 4 // SillyTavern's default depth
	switch v := loose.Depth.(type) {
	case float64:
		d.Depth = int(v)
	case string:
		fmt.Sscan(v, &d.Depth)
	}
	d.Depth = max(0, min(d.Depth, 1000))
	switch d.Role {
	case "user", "assistant", "system":
	default:
		d.Role = "system"
	}
	return d, true
}

// extensionNotes says, one line each, what of the card's extensions cyan
// does not carry out.
func (c *Card) extensionNotes() []string {
	var notes []string
	for _, k := range sortedKeys(c.Extensions) {
		raw := c.Extensions[k]
		if quietExtensions[k] || isNull(raw) {
			continue
		}
		switch k {
		case "regex_scripts":
			notes = append(notes, scriptNotes(raw, "SillyTavern regex script", "rewrites the chat's text in SillyTavern; cyan does not run it (kept in card.json)")...)
		case "tavern_helper", "TavernHelper_scripts", "TavernHelper_variables", "JS-Slash-Runner":
			if nonEmpty(raw) {
				notes = append(notes, fmt.Sprintf("extensions.%s: Tavern Helper scripts run JavaScript inside SillyTavern; cyan does not run them (kept in card.json)", k))
			}
		case "world":
			var w string
			// SillyTavern's export puts the linked world's entries into
			// character_book; a card without one left its world behind.
			if json.Unmarshal(raw, &w) == nil && strings.TrimSpace(w) != "" && c.CharacterBook == nil {
				notes = append(notes, fmt.Sprintf("the card links SillyTavern's World Info %q, which is a separate file: import it with --lorebook FILE to use it", w))
			}
		case "risuai":
			notes = append(notes, risuNotes(raw)...)
		case "chub":
			var ch struct {
				Expressions json.RawMessage `json:"expressions"`
			}
			if json.Unmarshal(raw, &ch) == nil && nonEmpty(ch.Expressions) {
				notes = append(notes, "extensions.chub.expressions: Chub's expression pack is links to download; cyan does not fetch it (put the images in the persona's avatar/ folder, named joy.png, sadness.png, …)")
			}
		default:
			if nonEmpty(raw) {
				notes = append(notes, fmt.Sprintf("extensions.%s is not an extension cyan knows: kept in card.json for export, not used", k))
			}
		}
	}
	return notes
}

// scriptNotes is one note per script of a list, by its name.
func scriptNotes(raw json.RawMessage, what, why string) []string {
	var list []map[string]any
	if json.Unmarshal(raw, &list) != nil {
		if nonEmpty(raw) {
			return []string{fmt.Sprintf("%ss: %s", what, why)}
		}
		return nil
	}
	var out []string
	for i, s := range list {
		name := ""
		for _, k := range []string{"scriptName", "name", "comment"} {
			if v, ok := s[k].(string); ok && strings.TrimSpace(v) != "" {
				name = v
				break
			}
		}
		if name == "" {
			name = fmt.Sprintf("#%d", i+1)
		}
		if d, _ := s["disabled"].(bool); d {
			continue
		}
		out = append(out, fmt.Sprintf("%s %q %s", what, name, why))
	}
	return out
}

// risuNotes says which of RisuAI's scripted features the card uses.
func risuNotes(raw json.RawMessage) []string {
	var r map[string]json.RawMessage
	if json.Unmarshal(raw, &r) != nil {
		return nil
	}
	var out []string
	out = append(out, scriptNotes(r["customScripts"], "RisuAI regex script", "rewrites the chat's text in RisuAI; cyan does not run it (kept in card.json)")...)
	out = append(out, scriptNotes(r["triggerscript"], "RisuAI trigger script", "runs in RisuAI; cyan does not run it (kept in card.json)")...)
	for _, f := range []struct{ k, what string }{
		{"backgroundHTML", "its background HTML"}, {"virtualscript", "its virtual script"},
		{"additionalText", "its additional text"}, {"defaultVariables", "its default variables"},
		{"emotions", "its emotion images (links)"}, {"additionalAssets", "its additional assets (links)"},
	} {
		if nonEmpty(r[f.k]) {
			out = append(out, fmt.Sprintf("extensions.risuai.%s: %s is RisuAI's own; cyan leaves it out (kept in card.json)", f.k, f.what))
		}
	}
	return out
}

// nonEmpty reports a JSON value that holds something: not null, "", [], {},
// false or 0.
func nonEmpty(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	switch s {
	case "", "null", `""`, "[]", "{}", "false", "0":
		return false
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	switch x := v.(type) {
	case string:
		return strings.TrimSpace(x) != ""
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return true
}

// depthText is a Character's Note as persona.md's depth_prompt holds it:
// {{char}} and {{user}} written ${agent_name} and ${user} (the note is not
// a template; those two are replaced when it is put in).
func depthText(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = charMacro.ReplaceAllLiteralString(s, "${agent_name}")
	return userMacro.ReplaceAllLiteralString(s, "${user}")
}

// fromTemplateText is the reverse of depthText.
func fromTemplateText(s string) string {
	return strings.NewReplacer("${agent_name}", "{{char}}", "${user}", "{{user}}").Replace(s)
}

// faces puts the card's emotion pictures in the persona's avatar/ folder,
// named by cyan's emotion (persona.EmotionOf: a V3 "emotion" asset named
// joy becomes avatar/happy.png); the card's picture is already
// avatar/neutral.png. Of several pictures for one emotion the best ranked
// is taken; the notes say which pictures found no emotion.
func (c *Card) faces(files map[string][]byte) []string {
	type pick struct {
		rank int
		data []byte
		ext  string
	}
	best := map[string]pick{}
	var notes []string
	iconDone := c.Picture != nil
	for _, a := range c.Assets {
		if a.Type == "icon" && !iconDone && (a.Name == "main" || !hasMainIcon(c.Assets)) {
			// A picture that is not a PNG (RisuAI writes WebP and JPEG too)
			// cannot carry the card, but it is still the face.
			if data, ok := c.Embedded[strings.TrimPrefix(a.URI, "__asset:")]; ok && strings.HasPrefix(a.URI, "__asset:") {
				if ext := imageExt(a.Ext, data); ext != "" {
					files["avatar/neutral."+ext] = data
					iconDone = true
				}
			}
			continue
		}
		if a.Type != "emotion" {
			continue
		}
		key, ok := strings.CutPrefix(a.URI, "__asset:")
		if !ok {
			continue
		}
		data, ok := c.Embedded[key]
		if !ok {
			continue
		}
		ext := imageExt(a.Ext, data)
		if ext == "" {
			notes = append(notes, fmt.Sprintf("the emotion asset %q (%s) is not a picture the page can show (PNG, JPEG, WebP, GIF): kept in assets/", a.Name, path.Base(key)))
			continue
		}
		emotion, ok := persona.EmotionOf(a.Name)
		if !ok {
			notes = append(notes, fmt.Sprintf("the emotion asset %q matches none of cyan's emotions (%s): kept in assets/", a.Name, strings.Join(persona.Emotions, ", ")))
			continue
		}
		r := persona.EmotionRank(a.Name)
		if b, seen := best[emotion]; seen && b.rank <= r {
			continue
		}
		best[emotion] = pick{r, data, ext}
	}
	for _, e := range sortedKeys(best) {
		if e == "neutral" && c.Picture != nil {
			continue // the card's own picture is its neutral face
		}
		files["avatar/"+e+"."+best[e].ext] = best[e].data
	}
	return notes
}

// imageExt is the file extension the page shows a picture under (png, jpg,
// webp, gif), by its first bytes, else by the asset's ext; "" if neither
// says it is one of those.
func imageExt(ext string, data []byte) string {
	switch {
	case IsPNG(data):
		return "png"
	case bytes.HasPrefix(data, []byte{0xff, 0xd8, 0xff}):
		return "jpg"
	case len(data) > 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return "webp"
	case bytes.HasPrefix(data, []byte("GIF8")):
		return "gif"
	}
	switch e := strings.ToLower(strings.TrimPrefix(ext, ".")); e {
	case "png", "webp", "gif":
		return e
	case "jpg", "jpeg":
		return "jpg"
	}
	return ""
}
