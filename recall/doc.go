// Package recall finds what was said, however long ago: an embedded hybrid
// search over every stored message, and over the event and theory texts
// beside them (SPEC §5, the seed's main-virtual-recall).
//
// It owns the lexical index (BM25 over Snowball-stemmed words and CJK
// bigrams), the embedders (built-in ones that need no network and no
// download: GloVe word vectors, the default, and hashed words; a model on
// a server, called through the llm layer's embeddings client), the vector index (flat int8 or chromem-go, over
// embeddings kept in Badger), the ranking, channel and date filters, the
// plain search mode and the tool mode (an LLM pass that may rewrite the
// request into queries, drops what does not fit, then summarises) and the
// model's recall tool.
//
// Ranking runs in two stages (rank.go): gather runs the searches (BM25,
// one round of feedback terms, the vector scan) once; rank combines what
// they found with a few knobs — the feedback pass's weight, the line after
// a match, the session route (sessions: runs of a channel without 30
// minutes of silence), the vector scan's weight, the fill (the lines of
// the matching sessions that match nothing, lent for what their session
// and the line before them earn; off, as the vectors find the same
// lines), "when"
// questions favouring lines that place things in time and dates named in
// the question (temporal.go). The LoCoMo bench (crossval.go) tunes those
// knobs on some conversations and measures them on others, re-ranking
// without searching again; the shipped defaults are what it picks on all
// the development conversations, and its report sets the previous
// release's parts beside them, per category, under the same folds and
// under a harsher split (tuned on two conversations, measured on the
// rest).
//
// Records (records.go) are the texts of other kinds: event records' titles
// and theory articles, from a Records source the daemon fills with the
// event log. They have a small index of their own, rebuilt when the source
// says they changed, and their hits are merged with the chat log's
// passages by score, each result naming its kind and id.
//
// MatchRecords (topic.go) finds, unasked, the records a topic's talk
// touches (the event log brings theories to a topic with it), and
// HistoryRanges numbers runs of a channel's messages as the history
// references OpenHistory opens (an event record's messages).
//
// Tool mode's pass runs the prompt scripts recall_filter and
// recall_summary through the Scripts interface (the daemon passes the
// script library), so each call is traced and a persona overrides it. The
// tool (Tools, a packets.Tool for the tool registry) hands its passages to
// the workspace's pulled-info area and what it hit to a review hook
// (ToolOptions); this package keeps neither.
//
// Incremental indexing follows the store's arrival log: the Indexer is an
// actor that reads every message after its cursor and wakes on the store's
// coalescing signal; the embedding cursor is durable, so a restart resumes
// where it stopped. The lexical index is written to a snapshot with its
// cursor (lexsnap.go) and opened at start; a torn or stale one is thrown
// away and the index rebuilt from the store. The flat vector index keeps
// its vectors' sign bits in memory and their codes in a vector file
// (vecfile.go, flat.go), with a copy of the first of them (vecHeapMax) in
// memory too, appended as vectors are made, committed with the
// embedding cursor and opened at start; a torn or stale one is rebuilt
// from the embeddings in Badger (vecload.go) — or, for the built-in GloVe
// vectors, which Badger does not keep, by embedding the messages' texts
// again, a few microseconds each. With the vectors at weight
// 0 (HashEmbedder's default) none are made or kept.
//
// It imports importer for the LoCoMo benchmark, llm for the embeddings
// client, packets for the knowledge scopes its tool checks, and journal to
// follow what is stored;
// mainvirtual never imports it (the registry takes its tool).
//
// It may import store, importer, packets, llm, journal, backoff and notation.
package recall
