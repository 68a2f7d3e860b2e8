package recall

import (
	"context"
	"strings"

	"github.com/cyan-agent/cyan/llm"
)

// A text the embedder refuses must not hold back every text after it.
// Ollama answers a whole /api/embed request with 400 "embedding contains
// NaN or Inf values" when one text's vector comes out NaN (bge-m3 does on
// some texts), and older releases with 500 "json: unsupported value:
// NaN"; a runner may refuse one text's length. Tried again as it is, the
// batch fails for ever, and the embedding cursor with it.
//
// embedIsolating halves a refused batch until each refused text stands
// alone, and gives that text no vector (nil at its place) — but only when
// the server embeds probeText in the same pass: a server that refuses
// everything (a chat model, a wrong endpoint) is a configuration to fix,
// not texts to skip, so its error is returned and the batch is tried
// again later, whole. Errors of another kind (the server down, busy, a
// timeout) are returned as they are. skipped counts the nil vectors.
func embedIsolating(ctx context.Context, emb Embedder, texts []string) (vecs [][]float32, skipped int, err error) {
	vecs, err = emb.Embed(ctx, texts)
	if err == nil || !refusedForText(err) || ctx.Err() != nil {
		return vecs, 0, err
	}
	if len(texts) == 1 {
		if _, perr := emb.Embed(ctx, []string{probeText}); perr != nil {
			return nil, 0, err
		}
		return [][]float32{nil}, 1, nil
	}
	half := len(texts) / 2
	a, na, err := embedIsolating(ctx, emb, texts[:half])
	if err != nil {
		return nil, 0, err
	}
	b, nb, err := embedIsolating(ctx, emb, texts[half:])
	if err != nil {
		return nil, 0, err
	}
	return append(a, b...), na + nb, nil
}

// probeText is what a server that embeds anything embeds.
const probeText = "hello"

// refusedForText reports whether err is the server refusing what a text
// holds rather than failing itself.
func refusedForText(err error) bool {
	switch llm.KindOf(err) {
	case llm.BadRequest, llm.ContextLength:
		return true
	case llm.Server:
		return strings.Contains(err.Error(), "NaN")
	}
	return false
}
