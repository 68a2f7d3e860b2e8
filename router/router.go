package router

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/cyan-agent/cyan/glob"
	"github.com/cyan-agent/cyan/packets"

	"github.com/dgraph-io/badger/v4"

	"github.com/cyan-agent/cyan/backoff"
	"github.com/cyan-agent/cyan/journal"
)

// Packet kinds.
const (
	KindReply     = "reply"     // an answer to a message
	KindProactive = "proactive" // the agent spoke first
	KindSpeech    = "speech"    // speech segments for a voice
)

// Packet is an outgoing nl_packet as the router carries it.
type Packet struct {
	// Key is the idempotency key (the stored message's id).
	Key       string            `json:"key"`
	Channel   string            `json:"channel"`
	Kind      string            `json:"kind"`
	Text      string            `json:"text"`
	Part      int               `json:"part,omitempty"`
	ReplyTo   string            `json:"reply_to,omitempty"`
	Proactive bool              `json:"proactive,omitempty"`
	Speech    []packets.Segment `json:"speech,omitempty"`
	Time      time.Time         `json:"time"`
}

// Delivery is a packet handed to one component.
type Delivery struct {
	Packet
	// Seq is the packet's place in this component's outbox (it only grows).
	Seq uint64 `json:"seq"`
	// Attempt counts the offers of this packet, from 1.
	Attempt int `json:"attempt"`
}

// Component takes deliveries; see the package documentation for what its
// answer means.
type Component interface {
	Deliver(ctx context.Context, d Delivery) error
}

// ComponentFunc adapts a function to Component.
type ComponentFunc func(ctx context.Context, d Delivery) error

// Deliver implements Component.
func (f ComponentFunc) Deliver(ctx context.Context, d Delivery) error { return f(ctx, d) }

type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// Permanent marks a delivery error that retrying cannot mend.
func Permanent(err error) error {
	if err == nil {
		err = errors.New("refused")
	}
	return permanent{err}
}

// IsPermanent reports whether err was marked Permanent.
func IsPermanent(err error) bool {
	var p permanent
	return errors.As(err, &p)
}

// Options configure Open.
type Options struct {
	DB     *badger.DB // required
	Prefix string     // the router's key space
	// Retry is the wait between offers of a packet that failed (default
	// 1 s doubling to 1 min).
	Retry backoff.Policy
	// KeyTTL is how long a published key is remembered (default 30 days).
	KeyTTL  time.Duration
	Journal *journal.Journal // part states are posted here (nil: none)
	Now     func() time.Time // nil: time.Now
	Logger  *slog.Logger     // nil: discard
}

// Router routes outgoing packets to subscribed components.
type Router struct {
	o   Options
	log *slog.Logger

	mu   sync.Mutex
	seq  uint64
	subs map[string][]string // name → channel patterns
	comp map[string]*state
}

// state is what the router knows of one component while it runs.
type state struct {
	attached  bool
	wake      chan struct{}
	delivered int
	failed    int
	retrying  bool
	lastError string
}

// Open loads the subscriptions.
func Open(o Options) (*Router, error) {
	if o.DB == nil || o.Prefix == "" {
		return nil, errors.New("router: a database and a key prefix are required")
	}
	if o.Retry.Base == 0 {
		o.Retry = backoff.Policy{Base: time.Second, Max: time.Minute}
	}
	if o.KeyTTL == 0 {
		o.KeyTTL = 30 * 24 * time.Hour
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Router{o: o, log: o.Logger, subs: map[string][]string{}, comp: map[string]*state{}}
	err := o.DB.View(func(txn *badger.Txn) error {
		if item, err := txn.Get(r.seqKey()); err == nil {
			if err := item.Value(func(v []byte) error { r.seq = binary.BigEndian.Uint64(v); return nil }); err != nil {
				return err
			}
		} else if !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		p := []byte(o.Prefix + "s")
		it := txn.NewIterator(badger.IteratorOptions{Prefix: p, PrefetchValues: true})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			var pats []string
			if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, &pats) }); err != nil {
				return err
			}
			r.subs[string(it.Item().Key()[len(p):])] = pats
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("router: open: %w", err)
	}
	return r, nil
}

// Subscribe makes name a durable subscriber of the channels matching
// patterns (replacing its earlier patterns). Packets published from now on
// are kept for it until it takes them.
func (r *Router) Subscribe(name string, patterns []string) error {
	if name == "" || len(patterns) == 0 {
		return errors.New("router: a subscription needs a component name and at least one channel pattern")
	}
	for _, p := range patterns {
		if err := glob.CheckChannel(p); err != nil {
			return fmt.Errorf("router: %s: %w", name, err)
		}
	}
	b, _ := json.Marshal(patterns)
	if err := r.o.DB.Update(func(txn *badger.Txn) error { return txn.Set(r.subKey(name), b) }); err != nil {
		return fmt.Errorf("router: subscribe %s: %w", name, err)
	}
	r.mu.Lock()
	r.subs[name] = slices.Clone(patterns)
	r.mu.Unlock()
	return nil
}

// Unsubscribe forgets a subscriber and the packets kept for it.
func (r *Router) Unsubscribe(name string) error {
	r.mu.Lock()
	delete(r.subs, name)
	r.mu.Unlock()
	wb := r.o.DB.NewWriteBatch()
	defer wb.Cancel()
	err := r.o.DB.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: r.boxPrefix(name)})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			if err := wb.Delete(it.Item().KeyCopy(nil)); err != nil {
				return err
			}
		}
		return wb.Delete(r.subKey(name))
	})
	if err == nil {
		err = wb.Flush()
	}
	if err != nil {
		return fmt.Errorf("router: unsubscribe %s: %w", name, err)
	}
	return nil
}

// Publish puts p into the outbox of every subscriber of its channel, in
// one durable write, and returns their names. A packet whose Key was
// published before is not published again (nil names, no error).
func (r *Router) Publish(p Packet) ([]string, error) {
	if p.Key == "" || p.Channel == "" {
		return nil, errors.New("router: a packet needs a key and a channel")
	}
	if p.Time.IsZero() {
		p.Time = r.o.Now()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var names []string
	for name, pats := range r.subs {
		if slices.ContainsFunc(pats, func(pat string) bool { return glob.Channel(pat, p.Channel) }) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	b, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	seq := r.seq
	dup := false
	err = r.o.DB.Update(func(txn *badger.Txn) error {
		if _, err := txn.Get(r.keyKey(p.Key)); err == nil {
			dup = true
			return nil
		} else if !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		if err := txn.SetEntry(badger.NewEntry(r.keyKey(p.Key), nil).WithTTL(r.o.KeyTTL)); err != nil {
			return err
		}
		for _, n := range names {
			seq++
			if err := txn.Set(r.boxKey(n, seq), b); err != nil {
				return err
			}
		}
		var sb [8]byte
		binary.BigEndian.PutUint64(sb[:], seq)
		return txn.Set(r.seqKey(), sb[:])
	})
	if err != nil {
		return nil, fmt.Errorf("router: publish %s: %w", p.Key, err)
	}
	if dup {
		return nil, nil
	}
	r.seq = seq
	for _, n := range names {
		if st := r.comp[n]; st != nil {
			select {
			case st.wake <- struct{}{}:
			default:
			}
		}
	}
	return names, nil
}

// ErrAttached is returned by Attach for a component already attached.
var ErrAttached = errors.New("router: the component is attached already")

// attach marks name's subscription attached and returns its state; a
// component is attached once at a time (Attach, AttachLanes).
func (r *Router) attach(name string) (*state, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.subs[name]; !ok {
		return nil, fmt.Errorf("router: %q has no subscription; call Subscribe first", name)
	}
	st := r.comp[name]
	if st == nil {
		st = &state{}
		r.comp[name] = st
	}
	if st.attached {
		return nil, fmt.Errorf("%w: %s", ErrAttached, name)
	}
	st.attached, st.wake = true, make(chan struct{}, 1)
	return st, nil
}

// Attach delivers name's packets to c, oldest first, one at a time, until
// ctx ends (then it returns nil). Deliveries that fail are retried with
// backoff; see the package documentation. A component is attached once at
// a time.
func (r *Router) Attach(ctx context.Context, name string, c Component) error {
	st, err := r.attach(name)
	if err != nil {
		return err
	}
	defer func() {
		r.mu.Lock()
		st.attached, st.retrying = false, false
		r.mu.Unlock()
	}()
	attempt := 0
	var lastSeq uint64
	for {
		d, ok, err := r.head(name)
		if err != nil {
			return err
		}
		if !ok {
			select {
			case <-ctx.Done():
				return nil
			case <-st.wake:
				continue
			}
		}
		if d.Seq != lastSeq {
			attempt, lastSeq = 0, d.Seq
		}
		attempt++
		d.Attempt = attempt
		err = r.deliver(ctx, c, d)
		if ctx.Err() != nil {
			return nil
		}
		switch {
		case err == nil || IsPermanent(err):
			// The outbox entry goes and the count rises under one lock,
			// so Status never shows a delivery as neither pending nor
			// counted.
			r.mu.Lock()
			if derr := r.o.DB.Update(func(txn *badger.Txn) error { return txn.Delete(r.boxKey(name, d.Seq)) }); derr != nil {
				r.mu.Unlock()
				return fmt.Errorf("router: acknowledge %s to %s: %w", d.Key, name, derr)
			}
			st.retrying = false
			if err == nil {
				st.delivered++
			} else {
				st.failed++
				st.lastError = err.Error()
			}
			r.mu.Unlock()
			if err != nil {
				r.log.Warn("a packet cannot be delivered; dropped", "component", name, "key", d.Key, "channel", d.Channel, "err", err)
			}
		default:
			wait := r.o.Retry.Delay(attempt - 1)
			r.mu.Lock()
			st.retrying, st.lastError = true, err.Error()
			r.mu.Unlock()
			r.log.Warn("delivery failed; retrying", "component", name, "key", d.Key, "attempt", attempt, "in", wait, "err", err)
			if !backoff.Sleep(ctx, wait) {
				return nil
			}
		}
	}
}

// deliver calls the component, turning a panic into a temporary error.
func (r *Router) deliver(ctx context.Context, c Component, d Delivery) (err error) {
	defer func() {
		if v := recover(); v != nil {
			r.log.Error("router: a component panicked", "key", d.Key, "panic", v, "stack", string(debug.Stack()))
			err = fmt.Errorf("panic: %v", v)
		}
	}()
	return c.Deliver(ctx, d)
}

// head reads the oldest packet of name's outbox.
func (r *Router) head(name string) (Delivery, bool, error) {
	var d Delivery
	found := false
	err := r.o.DB.View(func(txn *badger.Txn) error {
		p := r.boxPrefix(name)
		it := txn.NewIterator(badger.IteratorOptions{Prefix: p, PrefetchValues: true, PrefetchSize: 1})
		defer it.Close()
		it.Rewind()
		if !it.Valid() {
			return nil
		}
		found = true
		d.Seq = binary.BigEndian.Uint64(it.Item().Key()[len(p):])
		return it.Item().Value(func(v []byte) error { return json.Unmarshal(v, &d.Packet) })
	})
	if err != nil {
		return d, false, fmt.Errorf("router: read the outbox of %s: %w", name, err)
	}
	return d, found, nil
}

// Status is a subscriber as /healthz and cyan doctor show it.
type Status struct {
	Name      string   `json:"name"`
	Channels  []string `json:"channels"`
	Attached  bool     `json:"attached"`
	Pending   int      `json:"pending"`
	Delivered int      `json:"delivered"`
	Failed    int      `json:"failed"`
	Retrying  bool     `json:"retrying,omitempty"`
	LastError string   `json:"last_error,omitempty"`
}

// Status lists the subscribers by name. Each is one snapshot: its
// pending count is read under the lock an acknowledgement holds while it
// removes the entry and counts it.
func (r *Router) Status() []Status {
	r.mu.Lock()
	out := make([]Status, 0, len(r.subs))
	for name, pats := range r.subs {
		s := Status{Name: name, Channels: slices.Clone(pats), Pending: r.pending(name)}
		if st := r.comp[name]; st != nil {
			s.Attached, s.Delivered, s.Failed, s.Retrying, s.LastError = st.attached, st.delivered, st.failed, st.retrying, st.lastError
		}
		out = append(out, s)
	}
	r.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (r *Router) pending(name string) int {
	n := 0
	_ = r.o.DB.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: r.boxPrefix(name)})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			n++
		}
		return nil
	})
	return n
}

func (r *Router) subKey(name string) []byte { return []byte(r.o.Prefix + "s" + name) }
func (r *Router) keyKey(key string) []byte  { return []byte(r.o.Prefix + "k" + key) }
func (r *Router) seqKey() []byte            { return []byte(r.o.Prefix + "n") }
func (r *Router) boxPrefix(name string) []byte {
	return []byte(r.o.Prefix + "o" + name + "\x00")
}
func (r *Router) boxKey(name string, seq uint64) []byte {
	k := r.boxPrefix(name)
	return binary.BigEndian.AppendUint64(k, seq)
}
