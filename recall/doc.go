// Package recall finds what was said, however long ago: an embedded hybrid
// search over every stored message, and over the event and theory texts
// beside them (SPEC §5, the seed's main-virtual-recall).
//
// It owns the lexical index (BM25 over words and CJK bigrams), the
// embedders (a built-in one that needs no network and no download, Ollama's
// /api/embed and OpenAI-compatible /v1/embeddings), the vector index
// (chromem-go, a cache of the embeddings kept in Badger), rank fusion,
// channel and date filters, the plain search mode and the tool mode (an LLM
// pass that drops what does not fit, then a summary) and the model's recall
// tool.
//
// Records (records.go) are the texts of other kinds: event records' titles
// and theory articles, from a Records source the daemon fills with the
// event log. They have a small index of their own, rebuilt when the source
// says they changed, and their hits are merged with the chat log's
// passages by score, each result naming its kind and id.
//
// Tool mode's pass runs the prompt scripts recall_filter and
// recall_summary through the Scripts interface (the daemon passes the
// script library), so each call is traced and a persona overrides it. The
// tool hands its passages to the workspace's pulled-info area and what it
// hit to a review hook (ToolOptions); this package keeps neither.
//
// Incremental indexing follows the store's arrival log: the Indexer is an
// actor that reads every message after its cursor and wakes on the store's
// coalescing signal; the embedding cursor is durable, so a restart resumes
// where it stopped.
//
// It imports store, importer (for the LoCoMo benchmark) and packets (the
// knowledge scopes its open tool checks);
// mainvirtual never imports it (the daemon wires its tool in).
package recall
