package tts

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"
)

// Cache keeps synthesized audio by (provider, voice, text), newest used
// last, within a byte budget. Concurrent requests for the same key wait
// for one synthesis. It is safe for concurrent use.
type Cache struct {
	mu       sync.Mutex
	max, now int
	items    map[string]*list.Element
	order    *list.List // front: least recently used
	inflight map[string]*call
	hits     int
	misses   int
}

type entry struct {
	key   string
	audio Audio
}

type call struct {
	done  chan struct{}
	audio Audio
	err   error
}

// NewCache makes a cache of at most maxBytes of audio (0: nothing is kept,
// but concurrent requests still share one synthesis).
func NewCache(maxBytes int) *Cache {
	return &Cache{max: maxBytes, items: map[string]*list.Element{}, order: list.New(), inflight: map[string]*call{}}
}

// Key is the cache key of a text in a provider's voice.
func Key(provider, voice, text string) string {
	h := sha256.New()
	for _, s := range []string{provider, voice, text} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// Get returns the audio under key, if kept.
func (c *Cache) Get(key string) (Audio, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return Audio{}, false
	}
	c.order.MoveToBack(el)
	return el.Value.(*entry).audio, true
}

// Stats returns the hits and misses so far.
func (c *Cache) Stats() (hits, misses int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, c.misses
}

// Do returns the audio under key, making it with synth when it is not kept
// (once, however many ask at the same time). Failures are not kept. A
// caller whose ctx ends stops waiting; the synthesis goes on for the others,
// so synth must bound itself (its own timeout), not use one caller's ctx.
func (c *Cache) Do(ctx context.Context, key string, synth func() (Audio, error)) (Audio, error) {
	c.mu.Lock()
	if el, ok := c.items[key]; ok {
		c.order.MoveToBack(el)
		c.hits++
		c.mu.Unlock()
		return el.Value.(*entry).audio, nil
	}
	cl, ok := c.inflight[key]
	if !ok {
		c.misses++
		cl = &call{done: make(chan struct{})}
		c.inflight[key] = cl
		go c.run(key, cl, synth)
	} else {
		c.hits++
	}
	c.mu.Unlock()
	select {
	case <-cl.done:
		return cl.audio, cl.err
	case <-ctx.Done():
		return Audio{}, ctx.Err()
	}
}

func (c *Cache) run(key string, cl *call, synth func() (Audio, error)) {
	defer close(cl.done)
	defer func() {
		if v := recover(); v != nil {
			cl.err = &Error{Provider: "cache", Msg: "synthesis panicked"}
			c.mu.Lock()
			delete(c.inflight, key)
			c.mu.Unlock()
		}
	}()
	cl.audio, cl.err = synth()
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.inflight, key)
	if cl.err == nil {
		c.put(key, cl.audio)
	}
}

// put keeps audio under key, dropping the least recently used to fit.
func (c *Cache) put(key string, a Audio) {
	size := len(a.Data)
	if size > c.max {
		return
	}
	if el, ok := c.items[key]; ok {
		c.now -= len(el.Value.(*entry).audio.Data)
		c.order.Remove(el)
	}
	c.items[key] = c.order.PushBack(&entry{key: key, audio: a})
	c.now += size
	for c.now > c.max {
		el := c.order.Front()
		e := el.Value.(*entry)
		c.order.Remove(el)
		delete(c.items, e.key)
		c.now -= len(e.audio.Data)
	}
}
