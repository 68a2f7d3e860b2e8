package turn

// Principal is whom a proactive turn acts for, and so whose rights its
// tool calls and reads have: a due plan acts for the plan's maker (a plan
// a stranger made never gains the owner's rights when it fires); an
// observer's speech acts for the observer, under its own permission
// (Component names it for the daemon).
type Principal struct {
	Speaker   string `json:"speaker,omitempty"`
	SpeakerID string `json:"speaker_id,omitempty"`
	Owner     bool   `json:"owner,omitempty"`
	Component string `json:"component,omitempty"`
}
