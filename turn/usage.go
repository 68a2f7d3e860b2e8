package turn

// The workspace-usage report (SPEC §2): while the workspace is not empty,
// each answer reports which items it used and which it may use next, "at
// the same time" as the answer — never as an extra model request. The model
// has two ways to send it in the same response as its words:
//
//   - a call of the workspace_usage tool (a report: the turn makes no
//     further request for it, see ToolResult.Quiet);
//   - a trailing form in its text, which the output parser removes before
//     anything reaches a person:
//     <workspace_usage used="w1,w3" maybe="w2"/>
//
// When it sends neither, main-observer's lexical match of the answer
// against the items stands in. The trace records which path was taken.
const UsageToolName = "workspace_usage"

// Usage paths, as the trace and the memory's usage log name them.
const (
	UsageTool    = "tool"    // the model called workspace_usage
	UsageTrailer = "trailer" // the model wrote the trailing form
	UsageLexical = "lexical" // neither: main-observer's word match stands in
	UsageNone    = "none"    // the workspace was empty: nothing to report
)

// Usage is what a turn reported of its workspace use.
type Usage struct {
	// Path is UsageTool, UsageTrailer, or "" when the model reported
	// nothing.
	Path string `json:"path,omitempty"`
	// Used and Maybe are the trailer's ids (a tool call reports its own
	// through the tool).
	Used  []string `json:"used,omitempty"`
	Maybe []string `json:"maybe,omitempty"`
}
