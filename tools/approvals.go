package tools

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cyan-agent/cyan/journal"
	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/store"
	"github.com/dgraph-io/badger/v4"
)

// Approval is a call parked until the owner allows or denies it. It is
// kept in the store, so it survives a restart, until it is answered or
// expires.
type Approval struct {
	ID        string          `json:"id"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Caller    packets.Caller  `json:"caller"`
	Rule      string          `json:"rule"`
	Created   time.Time       `json:"created"`
	Expires   time.Time       `json:"expires"`
}

// Answer is what became of an approval.
type Answer struct {
	Approval Approval `json:"approval"`
	Allowed  bool     `json:"allowed"`
	Outcome  Outcome  `json:"outcome"`
	// MessageID is the tool message stored in the caller's channel.
	MessageID string `json:"message_id,omitempty"`
}

// Errors of Approvals.Answer.
var (
	ErrNoApproval = errors.New("no such pending approval; it was answered or has expired (cyan approvals lists the pending ones)")
	ErrExpired    = errors.New("the approval has expired; the call did not run (ask again)")
	// ErrAnswered: another answer took the approval first; that answer's
	// result is the only one (the error says which it was).
	ErrAnswered = errors.New("the approval was answered already")
)

// ApprovalOptions configure EnableApprovals.
type ApprovalOptions struct {
	Store  *store.Store
	TTL    time.Duration    // 0: one hour
	Now    func() time.Time // nil: time.Now
	Logger *slog.Logger
}

// Approvals keeps parked calls. A parked call returns to the model at once
// (the turn does not wait); when the owner answers, the call runs (or not)
// and its result is stored as a tool message of the caller's channel, so
// the model reads it among the tool calls of its next turn.
type Approvals struct {
	reg   *Registry
	store *store.Store
	ttl   time.Duration
	now   func() time.Time
	log   *slog.Logger

	mu sync.Mutex // claim and mark: one answer's mark at a time
}

// answeredMark is how an approval was answered: state is "being
// answered" while its call runs, then "allowed", "denied" or "expired".
// It is kept in the store (markKey) for the approvals' TTL after the
// answer, written in the transaction that takes the approval, so that a
// second answer is told apart from a wrong id after a restart too.
type answeredMark struct {
	State string    `json:"state"`
	At    time.Time `json:"at"`
}

// EnableApprovals turns on the confirm flow; without it, confirm denies.
func (r *Registry) EnableApprovals(o ApprovalOptions) *Approvals {
	if o.TTL <= 0 {
		o.TTL = time.Hour
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = r.log
	}
	a := &Approvals{reg: r, store: o.Store, ttl: o.TTL, now: o.Now, log: o.Logger}
	r.approvals = a
	return a
}

func approvalKey(id string) []byte { return []byte(store.PrefixApprovals + id) }

// markKey is where an answered approval's mark is kept: apr\x00 \x00 id,
// beside the pending ones (whose ids are hex, never starting with 0).
func markKey(id string) []byte { return []byte(store.PrefixApprovals + "\x00" + id) }

// isMark reports whether a key of the approvals' space is a mark.
func isMark(k []byte) bool {
	return len(k) > len(store.PrefixApprovals) && k[len(store.PrefixApprovals)] == 0
}

// setMark writes an answer's mark into txn, kept for the TTL.
func (a *Approvals) setMark(txn *badger.Txn, id string, m answeredMark) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return txn.SetEntry(badger.NewEntry(markKey(id), b).WithTTL(a.ttl))
}

// answeredAs reads an answered approval's mark.
func (a *Approvals) answeredAs(id string) (answeredMark, bool) {
	var m answeredMark
	err := a.store.DB().View(func(txn *badger.Txn) error {
		item, err := txn.Get(markKey(id))
		if err != nil {
			return err
		}
		return item.Value(func(v []byte) error { return json.Unmarshal(v, &m) })
	})
	return m, err == nil
}

func (a *Approvals) park(c packets.Caller, tool string, args json.RawMessage, rule string) (*Approval, error) {
	raw := make([]byte, 6)
	_, _ = rand.Read(raw)
	now := a.now()
	ap := &Approval{ID: hex.EncodeToString(raw), Tool: tool, Arguments: args, Caller: c, Rule: rule, Created: now, Expires: now.Add(a.ttl)}
	b, err := json.Marshal(ap)
	if err != nil {
		return nil, err
	}
	err = a.store.DB().Update(func(txn *badger.Txn) error { return txn.Set(approvalKey(ap.ID), b) })
	if err != nil {
		return nil, fmt.Errorf("tools: keep approval: %w", err)
	}
	a.log.Info("tool call waits for the owner", "approval", ap.ID, "tool", tool, "channel", c.Channel, "speaker", c.Speaker)
	a.post(*ap, "waiting")
	return ap, nil
}

// Pending lists the approvals waiting for an answer, oldest first; expired
// ones are removed on the way (Sweep).
func (a *Approvals) Pending() ([]Approval, error) {
	if err := a.Sweep(); err != nil {
		return nil, err
	}
	var out []Approval
	err := a.store.DB().View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(store.PrefixApprovals), PrefetchValues: true})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			if isMark(it.Item().Key()) {
				continue
			}
			var ap Approval
			if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, &ap) }); err != nil {
				return err
			}
			out = append(out, ap)
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Created.Before(out[j].Created) })
	return out, err
}

// Sweep removes the expired approvals and tells their channels.
func (a *Approvals) Sweep() error {
	now := a.now()
	var expired []Approval
	err := a.store.DB().Update(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(store.PrefixApprovals), PrefetchValues: true})
		var keys [][]byte
		for it.Rewind(); it.Valid(); it.Next() {
			if isMark(it.Item().Key()) {
				continue
			}
			var ap Approval
			if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, &ap) }); err != nil || !now.Before(ap.Expires) {
				keys = append(keys, it.Item().KeyCopy(nil))
				if err == nil {
					expired = append(expired, ap)
				}
			}
		}
		it.Close()
		for _, k := range keys {
			if err := txn.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	for _, ap := range expired {
		a.post(ap, "expired")
		a.tell(ap, fmt.Sprintf("the owner did not answer in time: %s did not run (approval %s expired).", ap.Tool, ap.ID))
	}
	return err
}

// take removes an approval and returns it. A transaction that conflicts
// (the sweep removing expired ones at the same moment) is tried again.
func (a *Approvals) take(id string) (Approval, error) {
	var ap Approval
	var err error
	for range 5 {
		if ap, err = a.takeOnce(id); !errors.Is(err, badger.ErrConflict) {
			break
		}
	}
	return ap, err
}

func (a *Approvals) takeOnce(id string) (Approval, error) {
	var ap Approval
	err := a.store.DB().Update(func(txn *badger.Txn) error {
		item, err := txn.Get(approvalKey(id))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return ErrNoApproval
		}
		if err != nil {
			return err
		}
		if err := item.Value(func(v []byte) error { return json.Unmarshal(v, &ap) }); err != nil {
			return err
		}
		if err := txn.Delete(approvalKey(id)); err != nil {
			return err
		}
		return a.setMark(txn, id, answeredMark{State: "being answered", At: a.now()})
	})
	return ap, err
}

// claim takes an approval for one answer: of two answers at once, or one
// after another, only the first gets it; the second gets ErrAnswered,
// saying how the first went.
func (a *Approvals) claim(id string) (Approval, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	ap, err := a.take(id)
	if errors.Is(err, ErrNoApproval) {
		if m, ok := a.answeredAs(id); ok {
			return ap, fmt.Errorf("%w: %s at %s; the call ran (or not) once, as that answer said", ErrAnswered, m.State, m.At.Format(time.RFC3339))
		}
	}
	return ap, err
}

// mark records how an answered approval went; a failure is logged (a
// later answer is then told the approval is being answered).
func (a *Approvals) mark(id, state string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	err := a.store.DB().Update(func(txn *badger.Txn) error {
		return a.setMark(txn, id, answeredMark{State: state, At: a.now()})
	})
	if err != nil {
		a.log.Warn("keep how an approval was answered", "approval", id, "err", err)
	}
}

// Answer allows or denies a pending call. An allowed call runs now (its
// permission is checked again: a rule that denies it since still wins);
// either way the outcome is stored in the caller's channel. Only the first
// answer to an approval does anything: another gets ErrAnswered.
func (a *Approvals) Answer(ctx context.Context, id string, allow bool) (*Answer, error) {
	if len(id) > 64 || strings.IndexByte(id, 0) >= 0 { // a NUL would name a mark (markKey)
		return nil, ErrNoApproval
	}
	ap, err := a.claim(id)
	if err != nil {
		return nil, err
	}
	if !a.now().Before(ap.Expires) {
		a.tell(ap, fmt.Sprintf("the owner did not answer in time: %s did not run (approval %s expired).", ap.Tool, ap.ID))
		a.mark(id, "expired")
		return nil, ErrExpired
	}
	ans := &Answer{Approval: ap, Allowed: allow}
	var text string
	if allow {
		ans.Outcome = a.reg.call(ctx, ap.Caller, ap.Tool, ap.Arguments, true)
		text = "approved by the owner: " + ans.Outcome.Text()
	} else {
		ans.Outcome = Outcome{Tool: ap.Tool, Decision: packets.Deny, Rule: "the owner denied it", Result: packets.Result{OutputFile: []string{}}}
		text = fmt.Sprintf("the owner denied this call: %s did not run.", ap.Tool)
	}
	ans.MessageID = a.tell(ap, text)
	a.post(ap, map[bool]string{true: "allowed", false: "denied"}[allow])
	a.mark(id, map[bool]string{true: "allowed", false: "denied"}[allow])
	a.log.Info("approval answered", "approval", ap.ID, "tool", ap.Tool, "allowed", allow)
	return ans, nil
}

// post tells the journal how an approval stands (journal.ToolApproval).
func (a *Approvals) post(ap Approval, state string) {
	a.store.Journal().Post(journal.New(journal.ToolApproval, ap.Caller.Channel, journal.Approval{ID: ap.ID, Tool: ap.Tool, State: state}))
}

// tell stores a tool message in the approval's channel.
func (a *Approvals) tell(ap Approval, text string) string {
	if store.ValidChannel(ap.Caller.Channel) != nil {
		return ""
	}
	m := &store.Message{Channel: ap.Caller.Channel, Role: store.RoleTool, User: ap.Tool, Kind: ap.Caller.Kind,
		Text: text, ToolName: ap.Tool, ToolCallID: ap.Caller.CallID}
	if err := a.store.Append(a.now(), m); err != nil {
		a.log.Warn("store approval outcome", "approval", ap.ID, "err", err)
		return ""
	}
	return m.ID
}

// Run sweeps expired approvals every interval until ctx ends.
func (a *Approvals) Run(ctx context.Context, every time.Duration) error {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := a.Sweep(); err != nil {
				a.log.Warn("sweep approvals", "err", err)
			}
		}
	}
}
