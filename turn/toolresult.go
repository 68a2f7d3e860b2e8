package turn

// ToolResult is what a call returns to the model.
type ToolResult struct {
	Text    string `json:"text"`
	IsError bool   `json:"is_error,omitempty"`
	// Quiet marks a report (workspace_usage): it needs no answer, so a step
	// whose calls are all quiet ends the turn without another model
	// request, and later prompts do not show it.
	Quiet bool `json:"quiet,omitempty"`
	// Transient marks file contents read by the call: the rough tool-call
	// area shows them until the channel's next user message (SPEC §3).
	Transient bool `json:"transient,omitempty"`
}
