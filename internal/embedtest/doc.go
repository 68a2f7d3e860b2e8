// Package embedtest is a stand-in for an embeddings server, copied from
// Ollama's handlers so that code under test meets what a user's local
// Ollama does. It speaks Ollama's POST /api/embed (and GET /api/tags) and
// Ollama's OpenAI layer, POST /v1/embeddings (and GET /v1/models), and
// code under test goes through the same llm client it uses in production.
//
// Its zero value is ready:
//
//	var s embedtest.Server
//	ts := httptest.NewServer(&s)
//
// What it copies, from github.com/ollama/ollama at commit
// fb30760996871fa9460115c753afd2c60d4ab0f7:
//
//   - server/routes.go, EmbedHandler: an empty body is 400 "missing
//     request body"; input is a string (an empty one embeds nothing and
//     answers 200 with "embeddings": []), a list of strings (each kept,
//     empty ones too) or null (nothing); any other type, or a list holding
//     a non-string, is 400 "invalid input type". A model that is not
//     pulled is 404 `model "x" not found, try pulling it first` (its
//     handleScheduleError for os.ErrNotExist). Each text is cut to the
//     model's context unless "truncate": false, which makes a longer text
//     400 "the input length exceeds the context length" (its
//     embedWithRetry; llm/llama_server.go normalizeEmbeddingError words
//     the runner's limit errors the same). Every vector is L2-normalised
//     (its normalize), and one holding NaN or Inf fails the whole request
//     with 400 "embedding contains NaN or Inf values" — what bge-m3 does
//     on some texts (ollama issue 14657). "dimensions" cuts each vector
//     and normalises it again. The answer carries "model" as asked,
//     "embeddings", "total_duration", "load_duration" and
//     "prompt_eval_count".
//   - server/sched.go, ErrMaxQueue: more requests waiting than the queue
//     holds is 503 "server busy, please try again.  maximum pending
//     requests exceeded" (two spaces, as there).
//   - middleware/openai.go, EmbeddingsMiddleware and EmbedWriter: "" as
//     input becomes [""]; null or an empty list is 400 "invalid input";
//     encoding_format other than float or base64 is 400 "Invalid value
//     for 'encoding_format' = x. Supported values: ['float', 'base64'].";
//     errors come back in OpenAI's shape with the type openai/openai.go
//     NewError gives the status (invalid_request_error, not_found_error,
//     api_error); openai/openai.go ToEmbeddingList makes the list, base64
//     being the little-endian float32s.
//
// What it does not copy: the model. Vectors are made from the texts (a
// hash of each word, so texts that share words are near), of Dims
// dimensions, and a token is a word. Synonyms map words to one feature, so
// a test can have the stand-in "know" that two words mean the same;
// Poison makes a text embed to NaN, as a real model sometimes does. It can
// fail on demand (Fail), hold requests until released (Hold), and it
// records every request.
//
// It imports nothing of cyan's.
package embedtest
