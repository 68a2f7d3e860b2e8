package card

import (
	"fmt"
	"strings"
	"testing"
)

// bigCard is a V2 card the size of a large real one: 8 KiB of description,
// 20 greetings and a lorebook of 300 entries.
func bigCard(b *testing.B) []byte {
	var entries []string
	for i := range 300 {
		entries = append(entries, fmt.Sprintf(`{"keys": ["key%d", "other%d"], "content": %q, "enabled": true, "insertion_order": %d, "extensions": {}}`,
			i, i, strings.Repeat("lore text ", 40), i))
	}
	var greetings []string
	for i := range 20 {
		greetings = append(greetings, fmt.Sprintf("%q", fmt.Sprintf("Greeting %d, {{user}}! ", i)+strings.Repeat("*waves* ", 40)))
	}
	js := fmt.Sprintf(`{"spec": "chara_card_v2", "spec_version": "2.0", "data": {"name": "Big", "description": %q, "first_mes": "Hi {{user}}",
		"alternate_greetings": [%s], "mes_example": %q, "character_book": {"entries": [%s]}}}`,
		strings.Repeat("{{char}} is described at length. ", 256), strings.Join(greetings, ","),
		strings.Repeat("<START>\n{{user}}: hi\n{{char}}: hello\n", 30), strings.Join(entries, ","))
	return cardPNG(b, "chara", js)
}

func BenchmarkReadPNG(b *testing.B) {
	data := bigCard(b)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Read(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkToFolder(b *testing.B) {
	c, err := Read(bigCard(b))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := ToFolder(c); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPNG(b *testing.B) {
	c, err := Read(bigCard(b))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := c.PNG(nil); err != nil {
			b.Fatal(err)
		}
	}
}
