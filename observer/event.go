package observer

// Event is an activity on the bus.
type Event struct {
	Name      string // one of the activity names
	Channel   string
	MessageID string
	// Text is the user message (AfterUserMessage) or the answer
	// (AfterAIResponse).
	Text string
	// Data carries what the event is about (e.g. the turn that ended).
	Data any
}
