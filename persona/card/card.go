package card

import (
	"encoding/json"
)

// Spec values of the card versions.
const (
	SpecV2 = "chara_card_v2"
	SpecV3 = "chara_card_v3"
)

// Limits of a card. A card past them is refused with the limit in the
// message.
const (
	MaxFileBytes  = 32 << 20  // a card file, PNG or JSON
	MaxJSONBytes  = 16 << 20  // the card's JSON
	MaxTextBytes  = 256 << 10 // one text field (description, a greeting, …)
	MaxNameBytes  = 256       // name and nickname
	MaxGreetings  = 256       // alternate_greetings, and group_only_greetings
	MaxTags       = 512       // tags
	MaxAssetBytes = 16 << 20  // one asset embedded in a PNG
)

// Card is a character card of any version, as the V3 superset. Texts are
// as the card wrote them (macros such as {{char}} left in).
type Card struct {
	// Spec is the version it was read as: SpecV3, SpecV2 or "" for V1.
	Spec, SpecVersion string

	Name, Nickname                         string
	Description, Personality, Scenario     string
	FirstMes, MesExample                   string
	SystemPrompt, PostHistoryInstructions  string
	CreatorNotes                           string
	AlternateGreetings, GroupOnlyGreetings []string
	Tags                                   []string
	Creator, CharacterVersion              string
	// CharacterBook is the lorebook's JSON as the card held it (nil: none),
	// checked by lorebook.Parse.
	CharacterBook json.RawMessage
	// Extensions is the card's extensions object, kept whole.
	Extensions map[string]json.RawMessage
	// Assets are the V3 assets (nil: the V3 default, the main icon).
	Assets []Asset
	// Other holds the card's other data fields — creator_notes_multilingual,
	// source, creation_date, modification_date and fields this version does
	// not know — kept so that an export gives them back.
	Other map[string]json.RawMessage

	// Picture is the PNG image without its card chunks (nil for a JSON
	// card): the avatar.
	Picture []byte
	// Embedded are the PNG-embedded assets, by path (the "__asset:path"
	// URIs of the V3 spec).
	Embedded map[string][]byte
	// Notes say what the import changed or could not keep.
	Notes []string
}

// Asset is a V3 asset.
type Asset struct {
	Type string `json:"type"`
	URI  string `json:"uri"`
	Name string `json:"name"`
	Ext  string `json:"ext"`
}

// Version names the card's version for people.
func (c *Card) Version() string {
	switch c.Spec {
	case SpecV3:
		return "Character Card V3"
	case SpecV2:
		return "Character Card V2"
	}
	return "Character Card V1"
}
