package archive

import "github.com/cyan-agent/cyan/store"

// space is a key space of the store that an export carries as records.
type space struct {
	name, prefix string
}

// spaces are the key spaces exported as records, in export order. The
// store's own (messages and their indexes, channels, compressed forms) are
// exported as their own lines; the rest of store.Prefix* is working state
// or derived, and TestEveryKeySpaceIsDecided keeps this list and that
// choice up to date.
var spaces = []space{
	{"workspace", store.PrefixMemory},
	{"event", store.PrefixEvent},
	{"event_id", store.PrefixEventID},
	{"event_first", store.PrefixEventFirst},
	{"event_pending", store.PrefixEventPending},
	{"topic_cursor", store.PrefixTopicCursor},
	{"rollup_mark", store.PrefixRollupMark},
	{"rollup_dirty", store.PrefixRollupDirty},
	{"rollup_fail", store.PrefixRollupFail},
	{"object", store.PrefixObject},
	{"object_name", store.PrefixObjectName},
	{"relation", store.PrefixRelation},
	{"theory", store.PrefixTheory},
	{"observer", store.PrefixObserver},
}

// notExported are the key spaces left out, and why.
var notExported = map[string]string{
	store.PrefixApprovals:       "tool calls waiting for the owner: they expire within the hour",
	store.PrefixGenerateTrace:   "traces of model calls: diagnostics, not memories",
	store.PrefixGenerateSummary: "traces of model calls: diagnostics, not memories",
	store.PrefixRecall:          "the recall index and embeddings: rebuilt from the messages",
	store.PrefixJournal:         "the journal: the daemon's stream of what happens, for its parts to follow; the messages and records it tells of are exported themselves",
	store.PrefixRouter:          "the router's outboxes: deliveries in flight to bridges and voices",
	store.PrefixBridge:          "the bridges' record of what they sent (platform message ids), for deliveries in flight",
	// A backup (the whole database) keeps them; an export, which may be
	// taken to another machine and another server, does not.
	store.PrefixModelFacts: "what the model's server showed of itself (reasoning its template opens, its window): tied to that server, learned again from it",
}

func spaceByName(name string) (space, bool) {
	for _, s := range spaces {
		if s.name == name {
			return s, true
		}
	}
	return space{}, false
}
