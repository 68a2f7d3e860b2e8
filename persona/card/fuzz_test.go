package card

import (
	"bytes"
	"testing"
)

// FuzzReadChunks: the PNG chunk reader never panics, and what it reads it
// writes back the same.
func FuzzReadChunks(f *testing.F) {
	pic := picture(f)
	f.Add(pic)
	f.Add(cardPNG(f, "chara", v1Card))
	f.Add(withChunks(pic, iTXt("ccv3", b64(v3Card), true), tEXt("Comment", "caf\xe9")))
	f.Add(withChunks(pic, rawChunk("zTXt", []byte("k\x00\x00x\x9c\x03\x00\x00\x00\x00\x01"))))
	f.Add(pic[:20])
	f.Add([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x00IEND\xaeB`\x82"))
	f.Fuzz(func(t *testing.T, data []byte) {
		chunks, err := ReadChunks(data)
		if err != nil {
			if chunks != nil {
				t.Fatal("chunks with an error")
			}
			return
		}
		for _, c := range chunks {
			_, _, _ = TextOf(c)
		}
		again, err := ReadChunks(EncodeChunks(chunks))
		if err != nil || len(again) != len(chunks) {
			t.Fatalf("re-encoded chunks do not read back: %v", err)
		}
		for i := range chunks {
			if again[i].Type != chunks[i].Type || !bytes.Equal(again[i].Data, chunks[i].Data) {
				t.Fatalf("chunk %d changed", i)
			}
		}
		if _, err := ReadChunks(EncodeChunks(WithText(chunks, TextChunk("chara", "eA==")))); err != nil {
			t.Fatalf("WithText made a broken PNG: %v", err)
		}
	})
}

// FuzzRead: the card decoder never panics; a card it reads encodes to V3
// and V2 JSON that read back with the same name, and makes a persona
// folder or says why not.
func FuzzRead(f *testing.F) {
	for _, s := range []string{v1Card, v2Card, v3Card, `{"name": "x"}`, `{"spec": "chara_card_v3", "data": {"name": "y", "character_book": {"entries": []}}}`,
		`{"spec": "chara_card_v2", "data": null}`, `{"data": {"name": "z"}}`} {
		f.Add([]byte(s))
	}
	f.Add(cardPNG(f, "chara", v2Card))
	f.Add(withChunks(picture(f), tEXt("ccv3", b64(v3Card)), tEXt("chara-ext-asset_:../../etc/passwd", b64("x"))))
	f.Add(withChunks(picture(f), tEXt("chara", "!!!")))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Read(data)
		if err != nil {
			return
		}
		for _, enc := range []func() ([]byte, error){c.JSONV3, c.JSONV2} {
			js, err := enc()
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			back, err := Decode(js)
			if err != nil {
				t.Fatalf("the encoded card does not read back: %v\n%s", err, js)
			}
			if back.Name != c.Name || back.Description != c.Description {
				t.Fatalf("name or description changed: %q → %q", c.Name, back.Name)
			}
		}
		if _, err := ToFolder(c); err != nil && c.Picture == nil && c.CharacterBook == nil {
			// Only sizes can make a folder fail; note it for the reader.
			t.Logf("folder: %v", err)
		}
	})
}
