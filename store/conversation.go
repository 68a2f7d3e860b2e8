package store

// Conversational reports whether a message is part of the conversation:
// what people and the platform said, and what the agent said (or its
// choice of silence). Tool results and bare tool-call records are not.
// It is the one rule for what a prompt's context shows (main-virtual) and
// what a topic is made of (events).
func (m *Message) Conversational() bool {
	switch m.Role {
	case RoleUser, RoleSystem:
		return true
	case RoleAssistant:
		return m.Text != "" || m.Empty
	}
	return false
}
