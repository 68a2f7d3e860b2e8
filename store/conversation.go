package store

// Conversational reports whether a message is part of the conversation:
// what people and the platform said, and what the agent said (or its
// choice of silence). Tool results and bare tool-call records are not,
// and neither is a message its sender recalled: it leaves every prompt.
// It is the one rule for what a prompt's context shows (main-virtual) and
// what a topic is made of (events).
func (m *Message) Conversational() bool {
	if m.IsRecalled() {
		return false
	}
	switch m.Role {
	case RoleUser, RoleSystem:
		return true
	case RoleAssistant:
		return m.Text != "" || m.Empty
	}
	return false
}
