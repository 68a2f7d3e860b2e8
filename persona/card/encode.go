package card

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// BackfillNote is what the V2 copy of a V3 card says in its creator_notes,
// as the V3 spec asks of a backfilled chara chunk.
const BackfillNote = "This character card is Character Card V3, but it is loaded as a Character Card V2. Please use a Character Card V3 compatible application to use this character card properly."

// JSONV3 is the card as a Character Card V3.
func (c *Card) JSONV3() ([]byte, error) {
	d := object{
		{"name", c.Name},
		{"description", c.Description},
		{"tags", list(c.Tags)},
		{"creator", c.Creator},
		{"character_version", c.CharacterVersion},
		{"mes_example", c.MesExample},
		{"extensions", ext(c.Extensions)},
		{"system_prompt", c.SystemPrompt},
		{"post_history_instructions", c.PostHistoryInstructions},
		{"first_mes", c.FirstMes},
		{"alternate_greetings", list(c.AlternateGreetings)},
		{"personality", c.Personality},
		{"scenario", c.Scenario},
		{"creator_notes", c.CreatorNotes},
	}
	if c.CharacterBook != nil {
		d = append(d, kv{"character_book", c.CharacterBook})
	}
	if c.Assets != nil {
		d = append(d, kv{"assets", c.Assets})
	}
	if c.Nickname != "" {
		d = append(d, kv{"nickname", c.Nickname})
	}
	d = append(d, kv{"group_only_greetings", list(c.GroupOnlyGreetings)})
	d = c.withOther(d)
	return marshal(object{{"spec", SpecV3}, {"spec_version", "3.0"}, {"data", d}})
}

// JSONV2 is the card as a Character Card V2, for readers that do not know
// V3: the V3-only fields are left out, creator_notes opens with
// BackfillNote, and the V1 fields are repeated at the top for V1 readers.
func (c *Card) JSONV2() ([]byte, error) {
	notes := BackfillNote
	if c.CreatorNotes != "" {
		notes += "\n\n" + c.CreatorNotes
	}
	name := c.Name
	d := object{
		{"name", name},
		{"description", c.Description},
		{"personality", c.Personality},
		{"scenario", c.Scenario},
		{"first_mes", c.FirstMes},
		{"mes_example", c.MesExample},
		{"creator_notes", notes},
		{"system_prompt", c.SystemPrompt},
		{"post_history_instructions", c.PostHistoryInstructions},
		{"alternate_greetings", list(c.AlternateGreetings)},
	}
	if c.CharacterBook != nil {
		d = append(d, kv{"character_book", c.CharacterBook})
	}
	d = append(d, object{
		{"tags", list(c.Tags)},
		{"creator", c.Creator},
		{"character_version", c.CharacterVersion},
		{"extensions", ext(c.Extensions)},
	}...)
	return marshal(object{
		{"spec", SpecV2}, {"spec_version", "2.0"}, {"data", d},
		{"name", name}, {"description", c.Description}, {"personality", c.Personality},
		{"scenario", c.Scenario}, {"first_mes", c.FirstMes}, {"mes_example", c.MesExample},
	})
}

// withOther appends the card's other fields (sorted by name).
func (c *Card) withOther(d object) object {
	for _, k := range sortedKeys(c.Other) {
		d = append(d, kv{k, c.Other[k]})
	}
	return d
}

// PNG writes the card into picture, a PNG (c.Picture when nil): the V2
// copy in a chara chunk and the V3 card in a ccv3 chunk, both tEXt holding
// base64, before IEND, as SillyTavern writes them; then the embedded
// assets as chara-ext-asset_:path chunks.
func (c *Card) PNG(picture []byte) ([]byte, error) {
	if picture == nil {
		picture = c.Picture
	}
	if picture == nil {
		return nil, errors.New("card: no picture to write the card into")
	}
	chunks, err := ReadChunks(picture)
	if err != nil {
		return nil, fmt.Errorf("card: the picture: %w", err)
	}
	v2, err := c.JSONV2()
	if err != nil {
		return nil, err
	}
	v3, err := c.JSONV3()
	if err != nil {
		return nil, err
	}
	texts := []Chunk{
		TextChunk("chara", base64.StdEncoding.EncodeToString(v2)),
		TextChunk("ccv3", base64.StdEncoding.EncodeToString(v3)),
	}
	for _, path := range sortedKeys(c.Embedded) {
		texts = append(texts, TextChunk(assetPrefix+":"+path, base64.StdEncoding.EncodeToString(c.Embedded[path])))
	}
	return EncodeChunks(WithText(chunks, texts...)), nil
}

// kv and object write JSON objects with their keys in a chosen order.
type kv struct {
	k string
	v any
}

type object []kv

func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := marshal(f.k)
		b.Write(k)
		b.WriteByte(':')
		v, err := marshal(f.v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.k, err)
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshal is json.Marshal without HTML escaping (cards are full of "<" and
// "&", and their readers are not browsers).
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func list(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func ext(m map[string]json.RawMessage) map[string]json.RawMessage {
	if m == nil {
		return map[string]json.RawMessage{}
	}
	return m
}
