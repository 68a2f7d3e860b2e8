package daemon

import (
	"github.com/cyan-agent/cyan/events"
	"github.com/cyan-agent/cyan/memory"
	"github.com/cyan-agent/cyan/observer"
	"github.com/cyan-agent/cyan/recall"
	"github.com/cyan-agent/cyan/tools"
)

// Every LLM-backed step of cyan other than main-virtual's own turn runs a
// prompt script of the library (d.scripts), so each is traced (cyan trace,
// GET /api/v1/traces) and a persona overrides it with a file of the same
// name in its scripts/ folder, picked up at the next call without a
// restart. The library's generator talks through the metered client, and
// every step runs with its caller's context, so an observer's steps are
// charged to its budget. The packages declare the one method they need
// (Call, CallFile) as small interfaces of their own; the library fills
// them all.
var stepScripts = []struct{ name, step string }{
	{CompressScript, "main-virtual: compress an old reply of the agent's"},
	{memory.ScriptRemember, "remember: decide the kind of an item, or strengthen one"},
	{memory.ScriptCompress, "active GC: shorten a workspace item"},
	{memory.ScriptContextOperation, "context_operation: a request in plain words into operations"},
	{events.ScriptTitle, "event log: title and score a closed topic"},
	{events.ScriptSummary, "event log: summarise a day, week, month or year"},
	{events.ScriptExtract, "event log: facts and relation lines of a topic"},
	{recall.ScriptFilter, "recall: keep the passages that fit, or give up"},
	{recall.ScriptSummary, "recall: summarized_info of the passages kept"},
	{recall.ScriptRewrite, "recall: a request into search queries (tool mode)"},
	{tools.ScriptSpeak, "speak: text into speech segments"},
	{tools.ScriptSystemOperation, "system_operation: a request into file and terminal steps"},
	{observer.ScriptSpeech, "main-observer: decide whether to speak first"},
	{observer.ScriptDecide, "a persona observer's prompt: decide whether to speak first"},
}

// checkScripts logs, at start and whenever the persona folder changes,
// every step whose script does not load — a broken override in the
// persona's scripts/ — so the mistake shows before the step first runs. The daemon still starts: the step fails (and is
// retried, or falls back, as its part does) until the file is fixed.
func (d *Daemon) checkScripts() {
	for _, s := range stepScripts {
		if _, err := d.scripts.Load(s.name); err != nil {
			d.log.Error("prompt script does not load; its step fails until the file is fixed (cyan script check NAME)",
				"script", s.name, "step", s.step, "err", err)
		}
	}
}
