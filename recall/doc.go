// Package recall finds what was said, however long ago: an embedded hybrid
// search over every stored message (SPEC §5, the seed's main-virtual-recall).
//
// It owns the lexical index (BM25 over words and CJK bigrams), the
// embedders (a built-in one that needs no network and no download, Ollama's
// /api/embed and OpenAI-compatible /v1/embeddings), the vector index
// (chromem-go, a cache of the embeddings kept in Badger), rank fusion,
// channel and date filters, the plain search mode and the tool mode (an LLM
// pass that drops what does not fit, then a summary), the model's recall
// tool and the pulled-info section its results land in.
//
// Incremental indexing follows the store's arrival log: the Indexer is an
// actor that reads every message after its cursor and wakes on the store's
// coalescing signal; the embedding cursor is durable, so a restart resumes
// where it stopped.
//
// It imports store, llm and importer (for the LoCoMo benchmark);
// mainvirtual never imports it (the daemon wires its tool and source in).
package recall
