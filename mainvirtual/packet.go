package mainvirtual

import (
	"github.com/cyan-agent/cyan/turn"
)

// Slots lists every slot in prompt order.
var Slots = []turn.Slot{turn.SlotLoreBefore, turn.SlotMain, turn.SlotLoreAfter, turn.SlotReference, turn.SlotToolCalls, turn.SlotEvents, turn.SlotWorkspace, turn.SlotPulled, turn.SlotPlans}

// slotTitle is the header a section gets in the system prompt; the main
// prompt has none.
var slotTitle = map[turn.Slot]string{
	turn.SlotLoreBefore: "# Lorebook",
	turn.SlotLoreAfter:  "# Lorebook",
	turn.SlotReference:  "# Persona reference",
	turn.SlotToolCalls:  "# Recent tool calls",
	turn.SlotEvents:     "# Recent event records",
	turn.SlotWorkspace:  "# Workspace",
	turn.SlotPulled:     "# Pulled information",
	turn.SlotPlans:      "# Plan steps",
}

// shown reports whether the packet's section of slot had content.
func shown(p *turn.Packet, slot turn.Slot) bool {
	if p == nil {
		return false
	}
	for _, s := range p.Sections {
		if s.Slot == slot {
			return s.Tokens > 0
		}
	}
	return false
}
