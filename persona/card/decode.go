package card

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cyan-agent/cyan/persona/lorebook"
)

// Read decodes a card file: a PNG with the card in a ccv3 (V3) or chara
// (V2, V1) text chunk, a CharX (.charx zip), or the card's JSON. Errors say
// what is wrong with the file and, where it helps, what to do.
func Read(data []byte) (*Card, error) {
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("the file is %d bytes; the limit for a card is %d", len(data), MaxFileBytes)
	}
	if IsPNG(data) {
		return ReadPNG(data)
	}
	if IsZip(data) {
		return ReadCharX(data)
	}
	trimmed := bytes.TrimLeft(bytes.TrimPrefix(data, []byte("\ufeff")), " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '{' {
		return Decode(data)
	}
	return nil, errors.New("not a character card: the file is neither a PNG image, a CharX (.charx) nor a JSON card")
}

// ReadPNG reads the card inside a PNG. The ccv3 chunk wins over chara, as
// the V3 spec says; the chara copy is dropped.
func ReadPNG(data []byte) (*Card, error) {
	chunks, err := ReadChunks(data)
	if err != nil {
		return nil, err
	}
	var v2, v3 *Text
	embedded := map[string][]byte{}
	for _, ch := range chunks {
		t, ok, err := TextOf(ch)
		if !ok || err != nil {
			continue // a broken text chunk that is not the card's is none of ours
		}
		switch k := strings.ToLower(t.Keyword); {
		case k == "ccv3" && v3 == nil:
			v3 = &t
		case k == "chara" && v2 == nil:
			v2 = &t
		case strings.HasPrefix(k, assetPrefix):
			path := strings.TrimPrefix(t.Keyword[len(assetPrefix):], ":")
			raw, err := unbase64(t.Text)
			if err != nil {
				return nil, fmt.Errorf("the embedded asset %q is not valid base64: %w", path, err)
			}
			if len(raw) > MaxAssetBytes {
				return nil, fmt.Errorf("the embedded asset %q is %d bytes; the limit is %d", path, len(raw), MaxAssetBytes)
			}
			embedded[path] = raw
		}
	}
	chunk := v3
	if chunk == nil {
		chunk = v2
	}
	if chunk == nil {
		return nil, errors.New("the PNG holds no character card (no \"chara\" or \"ccv3\" text chunk): it is a plain picture; export the card again from your card editor")
	}
	js, err := cardJSON(chunk.Text)
	if err != nil {
		return nil, fmt.Errorf("the %q chunk: %w", chunk.Keyword, err)
	}
	c, err := Decode(js)
	if err != nil {
		return nil, err
	}
	if v3 != nil && c.Spec != SpecV3 {
		c.Notes = append(c.Notes, fmt.Sprintf("the ccv3 chunk holds a %s card", c.Version()))
	}
	c.Picture = EncodeChunks(StripCard(chunks))
	if len(embedded) > 0 {
		c.Embedded = embedded
	}
	return c, nil
}

// cardJSON undoes the base64 of a card chunk. Some writers put the JSON in
// as it is; that is accepted too.
func cardJSON(text string) ([]byte, error) {
	if t := strings.TrimSpace(text); strings.HasPrefix(t, "{") {
		return []byte(t), nil
	}
	raw, err := unbase64(text)
	if err != nil {
		return nil, fmt.Errorf("not valid base64 (%v): the card is damaged", err)
	}
	if len(raw) > MaxJSONBytes {
		return nil, fmt.Errorf("the card's JSON is %d bytes; the limit is %d", len(raw), MaxJSONBytes)
	}
	if !utf8.Valid(raw) {
		return nil, errors.New("the card's JSON is not UTF-8 text: the card is damaged")
	}
	return raw, nil
}

// unbase64 decodes standard base64, with or without padding, ignoring line
// breaks and spaces.
func unbase64(s string) ([]byte, error) {
	s = strings.Map(func(r rune) rune {
		if r == ' ' || r == '\n' || r == '\r' || r == '\t' {
			return -1
		}
		return r
	}, s)
	s = strings.TrimRight(s, "=")
	raw, err := base64.RawStdEncoding.DecodeString(s)
	if err != nil {
		if raw2, err2 := base64.RawURLEncoding.DecodeString(s); err2 == nil {
			return raw2, nil
		}
		return nil, err
	}
	return raw, nil
}

// ErrWorldInfo is Decode's error for a SillyTavern World Info file: a
// lorebook, not a character.
var ErrWorldInfo = errors.New("this is a SillyTavern World Info file (a lorebook), not a character card: import it with cyan persona import --lorebook FILE")

// Decode reads a card's JSON: V1 (the fields at the top, no spec), V2
// (chara_card_v2) or V3 (chara_card_v3).
func Decode(data []byte) (*Card, error) {
	if len(data) > MaxJSONBytes {
		return nil, fmt.Errorf("the card's JSON is %d bytes; the limit is %d", len(data), MaxJSONBytes)
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	var top map[string]json.RawMessage
	if err := unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("the card's JSON: %w", err)
	}
	if top == nil {
		return nil, errors.New("the card's JSON is null, not a card")
	}
	if _, named := top["name"]; !named && top["data"] == nil && lorebook.IsWorldInfo(data) {
		return nil, ErrWorldInfo
	}
	spec, err := optString(top, "spec")
	if err != nil {
		return nil, err
	}
	version, err := specVersion(top)
	if err != nil {
		return nil, err
	}
	c := &Card{Spec: spec, SpecVersion: version}
	switch spec {
	case "":
		if d, ok := top["data"]; ok && bytes.HasPrefix(bytes.TrimSpace(d), []byte("{")) {
			c.Spec = SpecV2
			c.Notes = append(c.Notes, "the card has a data object but no spec; read as Character Card V2")
			return c, c.decodeData(d)
		}
		return c, c.decodeV1(top)
	case SpecV2:
		if version != "" && !strings.HasPrefix(version, "2") {
			return nil, fmt.Errorf("unknown spec_version %q for %s: cyan reads version 2.0 (export the card again, or as V3)", version, spec)
		}
	case SpecV3:
		v, err := strconv.ParseFloat(version, 64)
		switch {
		case version == "":
		case err != nil || v < 3:
			return nil, fmt.Errorf("unknown spec_version %q for %s: cyan reads version 3.0", version, spec)
		case v > 3:
			c.Notes = append(c.Notes, fmt.Sprintf("the card is spec_version %s, newer than the 3.0 cyan knows: the fields it knows were imported, newer ones are kept in card.json", version))
		}
	default:
		return nil, fmt.Errorf("unknown spec %q: cyan reads chara_card_v2, chara_card_v3 and V1 cards (no spec)", spec)
	}
	d, ok := top["data"]
	if !ok || !bytes.HasPrefix(bytes.TrimSpace(d), []byte("{")) {
		return nil, fmt.Errorf("a %s card needs a \"data\" object holding its fields", spec)
	}
	return c, c.decodeData(d)
}

func specVersion(top map[string]json.RawMessage) (string, error) {
	raw, ok := top["spec_version"]
	if !ok || isNull(raw) {
		return "", nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", err
	}
	switch x := v.(type) {
	case string:
		return x, nil
	case float64:
		return strconv.FormatFloat(x, 'f', 1, 64), nil
	}
	return "", fmt.Errorf("spec_version: want text such as \"3.0\", got %s", lorebook.JSONKind(raw))
}

// decodeV1 reads a V1 card: the six fields at the top, and what
// SillyTavern's V1 cards added beside them.
func (c *Card) decodeV1(top map[string]json.RawMessage) error {
	f := fields{m: top}
	c.Name = f.text("name", MaxNameBytes)
	c.Description = f.text("description", MaxTextBytes)
	c.Personality = f.text("personality", MaxTextBytes)
	c.Scenario = f.text("scenario", MaxTextBytes)
	c.FirstMes = f.text("first_mes", MaxTextBytes)
	c.MesExample = f.text("mes_example", MaxTextBytes)
	c.CreatorNotes = f.text("creator_notes", MaxTextBytes)
	if c.CreatorNotes == "" {
		c.CreatorNotes = f.text("creatorcomment", MaxTextBytes)
	}
	c.Creator = f.text("creator", MaxTextBytes)
	c.Tags = f.texts("tags", MaxTags)
	c.Extensions = map[string]json.RawMessage{}
	for _, k := range []string{"talkativeness", "fav"} {
		if v, ok := top[k]; ok && !isNull(v) {
			c.Extensions[k] = v
		}
	}
	if f.err != nil {
		return f.err
	}
	return c.check()
}

// decodeData reads the data object of a V2 or V3 card.
func (c *Card) decodeData(raw json.RawMessage) error {
	var m map[string]json.RawMessage
	if err := unmarshal(raw, &m); err != nil {
		return fmt.Errorf("data: %w", err)
	}
	f := fields{m: m, prefix: "data."}
	c.Name = f.text("name", MaxNameBytes)
	c.Nickname = f.text("nickname", MaxNameBytes)
	c.Description = f.text("description", MaxTextBytes)
	c.Personality = f.text("personality", MaxTextBytes)
	c.Scenario = f.text("scenario", MaxTextBytes)
	c.FirstMes = f.text("first_mes", MaxTextBytes)
	c.MesExample = f.text("mes_example", MaxTextBytes)
	c.CreatorNotes = f.text("creator_notes", MaxTextBytes)
	c.SystemPrompt = f.text("system_prompt", MaxTextBytes)
	c.PostHistoryInstructions = f.text("post_history_instructions", MaxTextBytes)
	c.AlternateGreetings = f.texts("alternate_greetings", MaxGreetings)
	c.GroupOnlyGreetings = f.texts("group_only_greetings", MaxGreetings)
	c.Tags = f.texts("tags", MaxTags)
	c.Creator = f.text("creator", MaxTextBytes)
	c.CharacterVersion = f.text("character_version", MaxTextBytes)
	c.Extensions = f.object("extensions")
	c.Assets = f.assets()
	if book, ok := m["character_book"]; ok && !isNull(book) {
		if _, err := lorebook.Parse(book); err != nil && f.err == nil {
			f.err = fmt.Errorf("data.character_book: %w", err)
		}
		c.CharacterBook = book
	}
	delete(m, "character_book")
	if f.err != nil {
		return f.err
	}
	if len(m) > 0 {
		c.Other = m
	}
	return c.check()
}

func (c *Card) check() error {
	if strings.TrimSpace(c.Name) == "" {
		return errors.New("the card has no name (data.name is empty): a character needs one; set it in a card editor")
	}
	return nil
}

// fields reads typed fields out of a JSON object, taking each out of the
// map; the first error is kept.
type fields struct {
	m      map[string]json.RawMessage
	prefix string
	err    error
}

func (f *fields) take(name string) (json.RawMessage, bool) {
	v, ok := f.m[name]
	delete(f.m, name)
	return v, ok && !isNull(v)
}

func (f *fields) fail(format string, args ...any) {
	if f.err == nil {
		f.err = fmt.Errorf(format, args...)
	}
}

func (f *fields) text(name string, limit int) string {
	raw, ok := f.take(name)
	if !ok {
		return ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		f.fail("%s%s: want text, got %s", f.prefix, name, lorebook.JSONKind(raw))
		return ""
	}
	if len(s) > limit {
		f.fail("%s%s is %d bytes; the limit is %d: shorten it in a card editor", f.prefix, name, len(s), limit)
		return ""
	}
	return s
}

func (f *fields) texts(name string, limit int) []string {
	raw, ok := f.take(name)
	if !ok {
		return nil
	}
	var list []*string
	if err := json.Unmarshal(raw, &list); err != nil {
		var s string
		if name == "tags" && json.Unmarshal(raw, &s) == nil { // V1 tools wrote tags as one text
			var out []string
			for _, t := range strings.Split(s, ",") {
				if t = strings.TrimSpace(t); t != "" {
					out = append(out, t)
				}
			}
			return out
		}
		f.fail("%s%s: want a list of texts, got %s", f.prefix, name, lorebook.JSONKind(raw))
		return nil
	}
	if len(list) > limit {
		f.fail("%s%s has %d items; the limit is %d", f.prefix, name, len(list), limit)
		return nil
	}
	out := make([]string, 0, len(list))
	for i, s := range list {
		if s == nil {
			continue
		}
		if len(*s) > MaxTextBytes {
			f.fail("%s%s[%d] is %d bytes; the limit is %d: shorten it in a card editor", f.prefix, name, i, len(*s), MaxTextBytes)
			return nil
		}
		out = append(out, *s)
	}
	return out
}

func (f *fields) object(name string) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	raw, ok := f.take(name)
	if !ok {
		return out
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		f.fail("%s%s: want an object {…}, got %s", f.prefix, name, lorebook.JSONKind(raw))
	}
	return out
}

func (f *fields) assets() []Asset {
	raw, ok := f.take("assets")
	if !ok {
		return nil
	}
	var list []Asset
	if err := json.Unmarshal(raw, &list); err != nil {
		f.fail("%sassets: want a list of {type, uri, name, ext}: %v", f.prefix, err)
		return nil
	}
	if list == nil {
		list = []Asset{}
	}
	return list
}

func optString(m map[string]json.RawMessage, name string) (string, error) {
	raw, ok := m[name]
	if !ok || isNull(raw) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%s: want text, got %s", name, lorebook.JSONKind(raw))
	}
	return s, nil
}

// unmarshal decodes a JSON object with errors that give line and column.
func unmarshal(data []byte, v any) error {
	d := bytes.TrimSpace(data)
	if len(d) > 0 && d[0] != '{' && !bytes.Equal(d, []byte("null")) {
		return fmt.Errorf("want a JSON object {…}, got %s", lorebook.JSONKind(d))
	}
	err := json.Unmarshal(data, v)
	if err != nil && strings.Contains(err.Error(), "unexpected end of JSON input") {
		return errors.New("broken JSON: it ends too early (the card is cut short)")
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := position(data, se.Offset)
		return fmt.Errorf("broken JSON at line %d, column %d: %v", line, col, err)
	}
	return err
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

// sortedKeys lists a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
