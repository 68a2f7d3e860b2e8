package observer

import "github.com/cyan-agent/cyan/journal"

// Event is an activity on the bus.
type Event struct {
	Name      string // one of the activity names
	Channel   string
	MessageID string
	// Text is the user message (AfterUserMessage) or the answer
	// (AfterAIResponse).
	Text string
	// Proactive marks the end of a turn the agent began on its own (a
	// due plan, an observer's speech); Origin names the observer that
	// began it. Observers that speak are not woken by it, so an observer
	// of AfterAIResponse that speaks cannot wake itself (or another
	// speaking observer, which would wake it back).
	Proactive bool
	Origin    string
	// Turn is the turn that ended (AfterAIResponse).
	Turn *journal.Turn
}

// activityOf is the activity a journal event is, if any: a person's
// message (AfterUserMessage, which Keyword triggers read), an answered
// turn (AfterAIResponse), a change of the workspace (MemoryChanged).
func activityOf(e journal.Event) (Event, bool) {
	switch e.Kind {
	case journal.MessageIn:
		var m journal.Message
		if e.Decode(&m) != nil || m.Role != "user" || e.Proactive {
			return Event{}, false
		}
		return Event{Name: AfterUserMessage, Channel: e.Channel, MessageID: m.ID, Text: m.Text}, true
	case journal.TurnDone:
		var t journal.Turn
		if e.Decode(&t) != nil || !t.Answered() {
			return Event{}, false
		}
		text := ""
		for i, r := range t.Replies {
			if i > 0 {
				text += "\n"
			}
			text += r
		}
		return Event{Name: AfterAIResponse, Channel: e.Channel, MessageID: t.MessageID, Text: text,
			Proactive: e.Proactive, Origin: e.Origin, Turn: &t}, true
	case journal.MemoryChanged:
		return Event{Name: MemoryChanged}, true
	}
	return Event{}, false
}
