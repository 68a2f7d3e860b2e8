// Package embedtest is a fake embeddings server for tests. It speaks the
// real wire protocols — Ollama's POST /api/embed (and GET /api/tags) and
// the OpenAI-compatible POST /v1/embeddings (and GET /v1/models) — so code
// under test goes through the same llm client it uses in production.
//
// Its zero value is ready:
//
//	var s embedtest.Server
//	ts := httptest.NewServer(&s)
//
// Vectors are made from the texts (a hash of each word, so texts that share
// words are near), of Dims dimensions; Synonyms map words to one feature,
// so a test can have the fake "know" that two words mean the same. It can
// fail (Fail), hold requests until released (Hold), and it records every
// request.
//
// It imports nothing of cyan's.
package embedtest
