package mainvirtual

import "github.com/cyan-agent/cyan/turn"

// The value types of a turn live in package turn, below main-virtual and
// the API alike; these names keep main-virtual's callers reading as
// before.
type (
	Incoming       = turn.Incoming
	Listener       = turn.Listener
	StreamEvent    = turn.StreamEvent
	Result         = turn.Result
	TurnError      = turn.TurnError
	Limited        = turn.Limited
	LimitNotice    = turn.LimitNotice
	ToolResult     = turn.ToolResult
	Usage          = turn.Usage
	Principal      = turn.Principal
	Trace          = turn.Trace
	StepTrace      = turn.StepTrace
	Packet         = turn.Packet
	Slot           = turn.Slot
	ItemTrace      = turn.ItemTrace
	SectionTrace   = turn.SectionTrace
	ContextTrace   = turn.ContextTrace
	CompressedItem = turn.CompressedItem
	DroppedItem    = turn.DroppedItem
)

// Conversation kinds, slots, bounds and usage paths (package turn).
const (
	KindPrivate = turn.KindPrivate
	KindGroup   = turn.KindGroup

	SlotMain       = turn.SlotMain
	SlotReference  = turn.SlotReference
	SlotToolCalls  = turn.SlotToolCalls
	SlotEvents     = turn.SlotEvents
	SlotWorkspace  = turn.SlotWorkspace
	SlotPulled     = turn.SlotPulled
	SlotPlans      = turn.SlotPlans
	SlotLoreBefore = turn.SlotLoreBefore
	SlotLoreAfter  = turn.SlotLoreAfter

	MaxTextBytes = turn.MaxTextBytes

	UsageToolName = turn.UsageToolName
	UsageTool     = turn.UsageTool
	UsageTrailer  = turn.UsageTrailer
	UsageLexical  = turn.UsageLexical
	UsageNone     = turn.UsageNone
)

// IsInvalid reports whether err is a rejected input (a 400 for callers).
func IsInvalid(err error) bool { return turn.IsInvalid(err) }
