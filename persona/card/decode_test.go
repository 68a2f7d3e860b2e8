package card

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestReadVersions(t *testing.T) {
	tests := []struct {
		name    string
		data    func(t *testing.T) []byte
		version string
		check   func(t *testing.T, c *Card)
	}{
		{"V1 JSON", func(*testing.T) []byte { return []byte(v1Card) }, "Character Card V1", func(t *testing.T, c *Card) {
			if c.Name != "Haruhi" || c.Personality != "energetic, bossy" || c.MesExample != specMesExample {
				t.Errorf("fields: %+v", c)
			}
			if string(c.Extensions["talkativeness"]) != `"0.8"` {
				t.Errorf("talkativeness not kept: %s", c.Extensions)
			}
			if c.Picture != nil {
				t.Error("a JSON card has no picture")
			}
		}},
		{"V1 PNG", func(t *testing.T) []byte { return cardPNG(t, "chara", v1Card) }, "Character Card V1", func(t *testing.T, c *Card) {
			if c.Name != "Haruhi" || c.Picture == nil {
				t.Errorf("%+v", c)
			}
		}},
		{"V2 JSON", func(*testing.T) []byte { return []byte(v2Card) }, "Character Card V2", checkV2},
		{"V2 PNG", func(t *testing.T) []byte { return cardPNG(t, "chara", v2Card) }, "Character Card V2", func(t *testing.T, c *Card) {
			checkV2(t, c)
			if !bytes.Equal(c.Picture, picture(t)) {
				t.Error("the picture should be the PNG without its card chunk")
			}
		}},
		{"V2 PNG in an iTXt chunk", func(t *testing.T) []byte {
			return withChunks(picture(t), iTXt("chara", b64(v2Card), true))
		}, "Character Card V2", checkV2},
		{"V3 JSON", func(*testing.T) []byte { return []byte(v3Card) }, "Character Card V3", checkV3},
		{"V3 PNG beside a V2 copy", func(t *testing.T) []byte {
			return withChunks(picture(t), tEXt("chara", b64(v2Card)), tEXt("ccv3", b64(v3Card)),
				tEXt("chara-ext-asset_:emotions/happy.png", b64("not really a png")))
		}, "Character Card V3", func(t *testing.T, c *Card) {
			checkV3(t, c)
			if string(c.Embedded["emotions/happy.png"]) != "not really a png" {
				t.Errorf("embedded assets: %q", c.Embedded)
			}
			if !bytes.Equal(c.Picture, picture(t)) {
				t.Error("the chara copy, ccv3 and the assets should all leave the picture")
			}
		}},
		{"BOM and raw JSON in the chunk", func(t *testing.T) []byte {
			return withChunks(picture(t), tEXt("Chara", v2Card))
		}, "Character Card V2", checkV2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Read(tt.data(t))
			if err != nil {
				t.Fatal(err)
			}
			if c.Version() != tt.version {
				t.Errorf("version %q, want %q", c.Version(), tt.version)
			}
			tt.check(t, c)
		})
	}
}

func checkV2(t *testing.T, c *Card) {
	t.Helper()
	if c.Name != "Seraphina" || c.Creator != "tester" || c.CharacterVersion != "1.2" || len(c.AlternateGreetings) != 2 || len(c.Tags) != 2 {
		t.Errorf("fields: %+v", c)
	}
	if !strings.HasPrefix(c.SystemPrompt, "{{original}}") || c.PostHistoryInstructions == "" {
		t.Errorf("instructions: %q %q", c.SystemPrompt, c.PostHistoryInstructions)
	}
	var ext map[string]any
	raw, _ := json.Marshal(c.Extensions)
	json.Unmarshal(raw, &ext)
	if ext["text_color"] != "#ff3333" || ext["agnai/voice"].(map[string]any)["id"] != "Bella" {
		t.Errorf("extensions (the V2 explainer's example): %s", raw)
	}
	if c.CharacterBook == nil || string(c.Other["x_unknown_v2_field"]) != `{"kept": true}` {
		t.Errorf("book %s, other %s", c.CharacterBook, c.Other)
	}
}

func checkV3(t *testing.T, c *Card) {
	t.Helper()
	if c.Name != "Alice Liddell" || c.Nickname != "Alice" || len(c.GroupOnlyGreetings) != 2 || len(c.Assets) != 2 {
		t.Errorf("fields: %+v", c)
	}
	for _, k := range []string{"creator_notes_multilingual", "source", "creation_date", "modification_date", "x_from_v3_1"} {
		if _, ok := c.Other[k]; !ok {
			t.Errorf("%s not kept", k)
		}
	}
}

func TestReadErrors(t *testing.T) {
	big := strings.Repeat("a", MaxTextBytes+1)
	v2 := func(data string) string {
		return `{"spec": "chara_card_v2", "spec_version": "2.0", "data": ` + data + `}`
	}
	tests := []struct {
		name string
		data func(t *testing.T) []byte
		want string
	}{
		{"not a card", func(*testing.T) []byte { return []byte("GIF89a, a picture") }, "neither a PNG image, a CharX (.charx) nor a JSON card"},
		{"a PNG without a card", func(t *testing.T) []byte { return picture(t) }, `no "chara" or "ccv3" text chunk`},
		{"a PNG with other text", func(t *testing.T) []byte { return withChunks(picture(t), tEXt("Comment", "hi")) }, "plain picture"},
		{"a damaged PNG", func(t *testing.T) []byte { p := cardPNG(t, "chara", v1Card); return p[:len(p)-30] }, "incomplete"},
		{"broken base64", func(t *testing.T) []byte { return withChunks(picture(t), tEXt("chara", "eyJuYW1l*&^%$")) }, `the "chara" chunk: not valid base64`},
		{"broken JSON in the PNG", func(t *testing.T) []byte { return cardPNG(t, "chara", `{"name": "x", "description": }`) }, "broken JSON at line 1, column 31"},
		{"JSON cut short", func(*testing.T) []byte { return []byte(`{"spec": "chara_card_v2", "data": {"name": "x"`) }, "ends too early"},
		{"JSON not an object", func(t *testing.T) []byte { return cardPNG(t, "chara", `["a"]`) }, "want a JSON object"},
		{"unknown spec", func(*testing.T) []byte { return []byte(`{"spec": "chara_card_v9", "data": {"name": "x"}}`) }, `unknown spec "chara_card_v9"`},
		{"unknown V2 version", func(*testing.T) []byte {
			return []byte(`{"spec": "chara_card_v2", "spec_version": "1.0", "data": {"name": "x"}}`)
		}, `unknown spec_version "1.0"`},
		{"unknown V3 version", func(*testing.T) []byte {
			return []byte(`{"spec": "chara_card_v3", "spec_version": "two", "data": {"name": "x"}}`)
		}, `unknown spec_version "two"`},
		{"no data", func(*testing.T) []byte { return []byte(`{"spec": "chara_card_v3", "spec_version": "3.0"}`) }, `needs a "data" object`},
		{"no name", func(*testing.T) []byte { return []byte(v2(`{"name": "  ", "description": "x"}`)) }, "the card has no name"},
		{"oversized description", func(*testing.T) []byte { return []byte(v2(`{"name": "x", "description": "` + big + `"}`)) }, "data.description is 262145 bytes; the limit is 262144"},
		{"oversized greeting", func(*testing.T) []byte {
			return []byte(v2(`{"name": "x", "alternate_greetings": ["hi", "` + big + `"]}`))
		}, "data.alternate_greetings[1] is 262145 bytes"},
		{"oversized name", func(*testing.T) []byte { return []byte(v2(`{"name": "` + strings.Repeat("n", 300) + `"}`)) }, "data.name is 300 bytes; the limit is 256"},
		{"wrong type", func(*testing.T) []byte { return []byte(v2(`{"name": "x", "first_mes": 12}`)) }, "data.first_mes: want text, got a number"},
		{"greetings not a list", func(*testing.T) []byte { return []byte(v2(`{"name": "x", "alternate_greetings": "hi"}`)) }, "data.alternate_greetings: want a list of texts"},
		{"extensions not an object", func(*testing.T) []byte { return []byte(v2(`{"name": "x", "extensions": [1]}`)) }, "data.extensions: want an object"},
		{"a World Info file", func(*testing.T) []byte { return []byte(`{"entries": {"0": {"key": ["a"], "content": "b"}}}`) }, "World Info file (a lorebook), not a character card"},
		{"a broken lorebook entry", func(*testing.T) []byte {
			return []byte(v2(`{"name": "x", "character_book": {"entries": [{"keys": ["a"], "content": 7, "comment": "Lost"}]}}`))
		}, "data.character_book: lorebook: entry 0 (Lost): content: want text, got a number"},
		{"a broken asset chunk", func(t *testing.T) []byte {
			return withChunks(cardPNG(t, "ccv3", v3Card), tEXt("chara-ext-asset_:a.png", "%%%"))
		}, `the embedded asset "a.png" is not valid base64`},
		{"too large", func(*testing.T) []byte { return make([]byte, MaxFileBytes+1) }, "the limit for a card is"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Read(tt.data(t))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v (card %+v), want it to say %q", err, c, tt.want)
			}
		})
	}
}

func TestNewerV3VersionIsReadWithANote(t *testing.T) {
	c, err := Decode([]byte(strings.Replace(v3Card, `"3.0"`, `"3.5"`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "newer than the 3.0") {
		t.Errorf("notes: %q", c.Notes)
	}
}

// JSONV3 and JSONV2 read back as the same card.
func TestEncodeReadsBack(t *testing.T) {
	for _, src := range []string{v1Card, v2Card, v3Card} {
		c, err := Decode([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		v3, err := c.JSONV3()
		if err != nil {
			t.Fatal(err)
		}
		back, err := Decode(v3)
		if err != nil {
			t.Fatalf("%v\n%s", err, v3)
		}
		if back.Spec != SpecV3 || back.Description != c.Description || back.Nickname != c.Nickname ||
			strings.Join(back.GroupOnlyGreetings, "|") != strings.Join(c.GroupOnlyGreetings, "|") || len(back.Other) != len(c.Other) {
			t.Errorf("V3 round trip of %s:\n%+v\n%+v", c.Name, c, back)
		}
		v2, err := c.JSONV2()
		if err != nil {
			t.Fatal(err)
		}
		back, err = Decode(v2)
		if err != nil {
			t.Fatal(err)
		}
		if back.Spec != SpecV2 || back.Description != c.Description || !strings.HasPrefix(back.CreatorNotes, BackfillNote) {
			t.Errorf("V2 copy of %s: %+v", c.Name, back)
		}
		if bytes.Contains(v3, []byte(`\u003c`)) {
			t.Error("HTML escaping in the card's JSON")
		}
	}
}
