package mainvirtual

import (
	"hash/maphash"
	"sync"

	"github.com/tiktoken-go/tokenizer"
)

// Counter counts the tokens of a text. Counts are estimates of the model's
// own tokenizer, good enough for budgets; they are made offline.
type Counter interface {
	Count(s string) int
}

// TokenCounter counts with the o200k_base encoding, loaded on first use, and
// remembers the counts of recent texts (the root prompt and most sections
// repeat from turn to turn).
type TokenCounter struct {
	once  sync.Once
	codec tokenizer.Codec
	err   error

	mu    sync.Mutex
	seed  maphash.Seed
	cache map[uint64]int
}

var _ Counter = (*TokenCounter)(nil)

// cacheLimit bounds the remembered counts; the cache is dropped when full.
const cacheLimit = 4096

// Count returns the number of tokens in s. If the encoding cannot load it
// falls back to a rough estimate (a token per 3 bytes).
func (c *TokenCounter) Count(s string) int {
	if s == "" {
		return 0
	}
	c.once.Do(func() {
		c.codec, c.err = tokenizer.Get(tokenizer.O200kBase)
		c.seed = maphash.MakeSeed()
		c.cache = make(map[uint64]int)
	})
	if c.err != nil {
		return (len(s) + 2) / 3
	}
	if len(s) < 16 {
		return c.count(s)
	}
	h := maphash.String(c.seed, s)
	c.mu.Lock()
	n, ok := c.cache[h]
	c.mu.Unlock()
	if ok {
		return n
	}
	n = c.count(s)
	c.mu.Lock()
	if len(c.cache) >= cacheLimit {
		clear(c.cache)
	}
	c.cache[h] = n
	c.mu.Unlock()
	return n
}

func (c *TokenCounter) count(s string) int {
	n, err := c.codec.Count(s)
	if err != nil {
		return (len(s) + 2) / 3
	}
	return n
}
