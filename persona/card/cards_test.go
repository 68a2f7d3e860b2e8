package card

// Cards built for the tests. The mes_example is the V1 spec's own example,
// the extensions the V2 explainer's, the first lorebook entry's decorators
// the V3 spec's.

const specMesExample = "<START>\n{{user}}: hi\n{{char}}: hello\n<START>\n{{user}}: hi\nHaruhi: hello"

const specExtensions = `{
      "text_color": "#ff3333",
      "agnai/voice": { "service": "elevenlabs", "id": "Bella" },
      "risu": {
        "expressions": {
          "happy": "https://cdn.risu.com/mary_happy.png",
          "sad": "https://cdn.risu.com/mary_sad.png"
        }
      }
    }`

const v1Card = `{
  "name": "Haruhi",
  "description": "{{char}} is a high-school student who founded the SOS Brigade. <BOT> is restless.",
  "personality": "energetic, bossy",
  "scenario": "{{user}} just joined the SOS Brigade.",
  "first_mes": "You! {{user}}! You're in the Brigade now.",
  "mes_example": "` + "<START>\\n{{user}}: hi\\n{{char}}: hello\\n<START>\\n{{user}}: hi\\nHaruhi: hello" + `",
  "talkativeness": "0.8",
  "avatar": "none"
}`

const v2Card = `{
  "spec": "chara_card_v2",
  "spec_version": "2.0",
  "name": "Old root name, ignored",
  "data": {
    "name": "Seraphina",
    "description": "{{char}} is a guardian of the Eldoria forest. She looks after <USER> with care.\r\n# Appearance\r\nPink hair, amber eyes.",
    "personality": "warm, protective, ${not a variable}",
    "scenario": "{{user}} wakes up in {{char}}'s glade.",
    "first_mes": "*{{char}} smiles at {{user}}.* You are awake!",
    "mes_example": "` + "<START>\\n{{user}}: hi\\n{{char}}: hello\\n<START>\\n{{user}}: hi\\nHaruhi: hello" + `",
    "creator_notes": "Made for the tests.\nBe kind to her.",
    "system_prompt": "{{original}}\nWrite {{char}}'s next reply in a fictional chat with {{user}}.",
    "post_history_instructions": "Stay in character as {{char}}.",
    "alternate_greetings": ["*{{char}} hums.* Hello, {{user}}.", "Welcome back."],
    "tags": ["fantasy", "guardian"],
    "creator": "tester",
    "character_version": "1.2",
    "extensions": ` + specExtensions + `,
    "character_book": {
      "name": "Eldoria",
      "scan_depth": 3,
      "token_budget": 400,
      "recursive_scanning": false,
      "extensions": {},
      "entries": [
        {"keys": ["Eldoria", "forest"], "content": "@@decorator_with_string_value value\n@@decorator_without_value\n\nEldoria is an ancient forest ruled by {{char}}.",
         "extensions": {"position": 0, "selectiveLogic": 0, "probability": 100, "useProbability": true}, "enabled": true,
         "insertion_order": 100, "case_sensitive": false, "id": 0, "comment": "Eldoria", "selective": false, "constant": false,
         "position": "before_char"},
        {"keys": ["shadowclaw"], "secondary_keys": ["night"], "selective": true, "content": "Shadowclaws hunt at night.",
         "extensions": {"selectiveLogic": 0}, "enabled": true, "insertion_order": 50, "id": 1, "comment": "Shadowclaws"}
      ]
    },
    "x_unknown_v2_field": {"kept": true}
  }
}`

const v3Card = `{
  "spec": "chara_card_v3",
  "spec_version": "3.0",
  "data": {
    "name": "Alice Liddell",
    "nickname": "Alice",
    "description": "{{char}} fell down a rabbit hole.",
    "tags": ["wonderland"],
    "creator": "tester",
    "character_version": "3",
    "mes_example": "",
    "extensions": {"depth_prompt": {"prompt": "Curiouser.", "depth": 4}},
    "system_prompt": "",
    "post_history_instructions": "",
    "first_mes": "Oh! Who are you, {{user}}?",
    "alternate_greetings": [],
    "personality": "curious",
    "scenario": "",
    "creator_notes": "V3 test card.",
    "creator_notes_multilingual": {"en": "V3 test card.", "ja": "テストカード"},
    "source": ["https://example.org/alice"],
    "group_only_greetings": ["Hello, everyone!", "Is this a tea party?"],
    "creation_date": 1700000000,
    "modification_date": 1700000500,
    "assets": [{"type": "icon", "uri": "ccdefault:", "name": "main", "ext": "png"},
               {"type": "emotion", "uri": "__asset:emotions/happy.png", "name": "happy", "ext": "png"}],
    "character_book": {
      "extensions": {},
      "entries": [
        {"keys": ["rabbit"], "content": "The White Rabbit is late.", "extensions": {}, "enabled": true, "insertion_order": 0, "use_regex": false}
      ]
    },
    "x_from_v3_1": 42
  }
}`
