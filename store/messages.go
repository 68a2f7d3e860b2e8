package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/dgraph-io/badger/v4"

	"github.com/cyan-agent/cyan/journal"
	"github.com/google/uuid"
)

// Role is who wrote a message.
type Role string

const (
	RoleUser      Role = "user"      // a person (any speaker in the channel)
	RoleAssistant Role = "assistant" // the agent
	RoleTool      Role = "tool"      // a tool's result, fed back to the agent
	RoleSystem    Role = "system"    // the platform (the daemon itself)
)

// ToolCall is a call the agent made in an assistant message.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Message is one stored message. Assistant answers are stored one message
// per outgoing chat message (the @br parts of one model output share ReplyTo
// and Step and count up in Part).
type Message struct {
	ID      string `json:"id"`
	Channel string `json:"channel"`
	Role    Role   `json:"role"`
	User    string `json:"user,omitempty"` // speaker name (the agent's name on assistant messages)
	// UserID is the speaker's id on their platform (a QQ or Telegram id),
	// when the bridge knows it; names can be changed, ids cannot.
	UserID string `json:"user_id,omitempty"`
	// Kind is the kind of conversation the message was said in: "private"
	// (one person and the agent) or "group".
	Kind string    `json:"kind,omitempty"`
	Text string    `json:"text"`
	Time time.Time `json:"time"`
	// Tokens caches the token count of Text, measured when stored.
	Tokens int `json:"tokens,omitempty"`
	// ReplyTo is the user message whose turn produced this message.
	ReplyTo string `json:"reply_to,omitempty"`
	// Step is the model call of the turn (0 for the first answer); Part is
	// the @br part within that output.
	Step int `json:"step,omitempty"`
	Part int `json:"part,omitempty"`
	// Empty marks the agent's choice to say nothing (<empty_reply>).
	Empty bool `json:"empty,omitempty"`
	// Proactive marks what the agent said on its own, not in answer to a
	// person (a due plan, an observer's prompt), and the platform line that
	// prompted it.
	Proactive bool `json:"proactive,omitempty"`
	// Incomplete marks an answer the model's server cut off mid-way: the
	// part that was shown, kept as it was shown.
	Incomplete bool `json:"incomplete,omitempty"`
	// Quotes are the messages an agent's message quotes (its @last
	// references, expanded in Text), so a bridge may render a reply to one.
	Quotes []string `json:"quotes,omitempty"`
	// ToolCalls are the calls made by the model output this message ends.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID and ToolName identify the call a tool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	ToolName   string `json:"tool_name,omitempty"`
	// Area says how long a tool result stays in the prompt's rough
	// tool-call area: AreaKept (while among the newest), AreaTurn (until
	// the channel's next user message: a file read not put into the
	// workspace is forgotten then) or AreaNone (a report the model made,
	// such as workspace_usage: never shown again).
	Area string `json:"area,omitempty"`
	// ExternalID is the id the message had where it came from (an import, a
	// chat platform).
	ExternalID string `json:"external_id,omitempty"`
	// Recalled is when the sender withdrew the message on its platform
	// (zero: never); see recalled.go.
	Recalled time.Time `json:"recalled,omitzero"`
	// Edited is when the sender last edited the message on its platform
	// (zero: never); Text is the newest version. See edited.go.
	Edited time.Time `json:"edited,omitzero"`
}

// Tool-call areas of a tool result (Message.Area).
const (
	AreaKept = ""
	AreaTurn = "turn"
	AreaNone = "none"
)

// Channel is a conversation that has at least one message.
type Channel struct {
	Name    string    `json:"name"`
	Created time.Time `json:"created"`
}

// Channel name limits.
const MaxChannelLen = 200

// ValidChannel reports whether name can name a channel: 1–200 bytes of
// UTF-8 without control characters.
func ValidChannel(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: the channel name is empty; name the conversation (e.g. \"home\" or \"qq:group:123\")", ErrInvalid)
	case len(name) > MaxChannelLen:
		return fmt.Errorf("%w: the channel name is %d bytes; the limit is %d", ErrInvalid, len(name), MaxChannelLen)
	case !utf8.ValidString(name):
		return fmt.Errorf("%w: the channel name is not valid UTF-8", ErrInvalid)
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return fmt.Errorf("%w: the channel name %q contains a control character", ErrInvalid, name)
		}
	}
	return nil
}

// Append stores messages in one durable transaction, giving each a new
// monotonic id (its Time is set to now when zero). It returns once the
// messages are on disk.
func (s *Store) Append(now time.Time, msgs ...*Message) error {
	for _, m := range msgs {
		if err := ValidChannel(m.Channel); err != nil {
			return err
		}
		if m.Time.IsZero() {
			m.Time = now
		}
		m.ID = s.ids.next(now).String()
	}
	if err := s.write(msgs); err != nil {
		return err
	}
	for _, m := range msgs {
		s.journal.Post(journal.New(MessageKind(m), m.Channel, EventOf(m)))
	}
	return nil
}

// MessageKind is the journal kind of a message stored live.
func MessageKind(m *Message) journal.Kind {
	switch m.Role {
	case RoleAssistant:
		return journal.MessageOut
	case RoleTool:
		return journal.MessageTool
	}
	if m.Role == RoleSystem && !m.Proactive {
		return journal.MessageTool // a platform notice (a limit), not a turn's start
	}
	return journal.MessageIn
}

// EventOf is a message as the journal carries it.
func EventOf(m *Message) journal.Message {
	return journal.Message{ID: m.ID, Role: string(m.Role), User: m.User, UserID: m.UserID, Kind: m.Kind, Text: m.Text,
		ReplyTo: m.ReplyTo, Step: m.Step, Part: m.Part, Empty: m.Empty, ToolName: m.ToolName, Time: m.Time, Proactive: m.Proactive, Incomplete: m.Incomplete}
}

// AppendHistory stores messages that happened in the past (an import, a
// bridge's backlog) in one durable transaction. Each message must carry its
// Time; its id is made from that time, not from now, so it sorts among the
// channel's messages where it was said. It does not check for duplicates:
// an importer that must be idempotent skips what it already stored.
func (s *Store) AppendHistory(msgs ...*Message) error {
	var ids historyIDs
	for i, m := range msgs {
		if err := ValidChannel(m.Channel); err != nil {
			return err
		}
		if m.Time.IsZero() {
			return fmt.Errorf("%w: history message %d has no time", ErrInvalid, i)
		}
		m.ID = ids.next(m.Time).String()
	}
	if err := s.write(msgs); err != nil {
		return err
	}
	s.journal.Post(journal.New(journal.MessagesImported, "", journal.Imported{Added: len(msgs)}))
	return nil
}

// putter writes the messages of one transaction: each message, its id and
// arrival entries (or its place in the transaction's arrival batch), its
// external id (when it has one) and its channel record. It remembers the
// channels whose record it has seen or written, so a batch of thousands
// of messages reads each channel's record once, not once per message. With maxSize set it also keeps the transaction
// under Badger's largest (counted as Badger counts it): a message that
// would not fit is refused with errTxnFull before anything of it is
// written, so the caller commits and goes on in a new transaction.
type putter struct {
	chans             map[string]bool
	size, count       int64 // what this transaction's puts take so far
	maxSize, maxCount int64 // 0: no bound
	// arrivals, when set, gathers the transaction's arrival entries into
	// one batch (arrival_batch.go), which putArrivals writes before the
	// commit; nil: each message gets its own entry.
	arrivals *arrivalBatch
}

// errTxnFull: the message does not fit in this transaction.
var errTxnFull = errors.New("store: the transaction is full")

// fresh starts counting a new transaction.
func (p *putter) fresh() {
	p.size, p.count = 0, 0
	if p.arrivals != nil {
		p.arrivals.reset()
	}
}

// putArrivals writes the batch of arrival entries gathered since fresh,
// the last of them arrival last; nothing when there is none.
func (p *putter) putArrivals(txn *badger.Txn, last uint64) error {
	if p.arrivals == nil || p.arrivals.len() == 0 {
		return nil
	}
	return txn.Set(arrivalBatchKey(last), p.arrivals.encode())
}

// put writes one message; one whose external id is already stored is
// refused with a DuplicateError.
func (p *putter) put(txn *badger.Txn, m *Message, seq uint64) error {
	id, err := uuid.Parse(m.ID)
	if err != nil {
		return fmt.Errorf("%w: message id %q: %v", ErrInvalid, m.ID, err)
	}
	b, err := encodeMessage(m)
	if err != nil {
		return err
	}
	var ext []byte
	if m.ExternalID != "" {
		if err := unheld(txn, m); err != nil {
			return err
		}
		ext = externalKey(m.Channel, m.ExternalID)
	}
	return p.putEncoded(txn, m, id, b, ext, seq)
}

// putEncoded writes one message with id, encoded as b, and its external
// id's key ext (nil: none), whose absence the caller has made sure of.
func (p *putter) putEncoded(txn *badger.Txn, m *Message, id uuid.UUID, b, ext []byte, seq uint64) error {
	kvs := [][2][]byte{
		{messageKey(m.Channel, id), b},
		{idKey(id), []byte(m.Channel)},
	}
	if p.arrivals == nil {
		kvs = append(kvs, [2][]byte{arrivalKey(seq), arrivalValue(id, m.Channel)})
	}
	if m.Role == RoleTool {
		kvs = append(kvs, [2][]byte{append(toolIndexPrefix(m.Channel), id[:]...), nil})
	}
	if ext != nil {
		kvs = append(kvs, [2][]byte{ext, id[:]})
	}
	newChan := !p.chans[m.Channel]
	if newChan {
		ck := channelKey(m.Channel)
		if _, err := txn.Get(ck); errors.Is(err, badger.ErrKeyNotFound) {
			cb, _ := json.Marshal(Channel{Name: m.Channel, Created: m.Time})
			kvs = append(kvs, [2][]byte{ck, cb})
		} else if err != nil {
			return err
		}
	}
	if p.maxSize > 0 {
		// As Badger's txn.checkSize: key, value and 12 bytes an entry
		// (a value it moves to the value log counts less).
		var size int64
		for _, kv := range kvs {
			size += int64(len(kv[0])+len(kv[1])) + 12
		}
		n := int64(len(kvs))
		if p.arrivals != nil {
			// The batch's growth, and its own key once.
			size += p.arrivals.reserve(m.Channel)
			if p.arrivals.len() == 0 {
				n++
			}
		}
		if p.count > 0 && (p.size+size >= p.maxSize || p.count+n >= p.maxCount) {
			return errTxnFull
		}
		p.size, p.count = p.size+size, p.count+n
	}
	for _, kv := range kvs {
		if err := txn.Set(kv[0], kv[1]); err != nil {
			return err
		}
	}
	if p.arrivals != nil {
		p.arrivals.add(id, m.Channel)
	}
	if newChan {
		if p.chans == nil {
			p.chans = map[string]bool{}
		}
		p.chans[m.Channel] = true
	}
	return nil
}

// Get returns the message with the given id.
func (s *Store) Get(id string) (*Message, error) {
	u, err := uuid.Parse(id)
	if err != nil {
		return nil, fmt.Errorf("%w: %q is not a message id", ErrInvalid, id)
	}
	var m Message
	err = s.db.View(func(txn *badger.Txn) error {
		it, err := txn.Get(idKey(u))
		if err != nil {
			return err
		}
		ch, err := it.ValueCopy(nil)
		if err != nil {
			return err
		}
		it, err = txn.Get(messageKey(string(ch), u))
		if err != nil {
			return err
		}
		return it.Value(func(v []byte) error { return json.Unmarshal(v, &m) })
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, fmt.Errorf("store: message %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get %s: %w", id, err)
	}
	return &m, nil
}

// Ref names a stored message by its channel and id. An index that knows
// both reads messages with GetRefs: one lookup a message, where Get, given
// only the id, looks up the channel first.
type Ref struct {
	Channel string
	ID      uuid.UUID
}

// GetRefs returns the messages refs name, in refs' order; a message no
// longer stored is nil. A search reads its passages with it: a dozen
// lookups, split between the cores.
func (s *Store) GetRefs(refs []Ref) ([]*Message, error) {
	out := make([]*Message, len(refs))
	read := func(refs []Ref, out []*Message) error {
		return s.db.View(func(txn *badger.Txn) error {
			for i, r := range refs {
				it, err := txn.Get(messageKey(r.Channel, r.ID))
				if errors.Is(err, badger.ErrKeyNotFound) {
					continue
				}
				if err != nil {
					return err
				}
				if out[i], err = decodeItem(it); err != nil {
					return err
				}
			}
			return nil
		})
	}
	var err error
	if half := len(refs) / 2; half >= getRefsSplit {
		var other error
		var wg sync.WaitGroup
		wg.Go(func() { other = read(refs[half:], out[half:]) })
		err = read(refs[:half], out[:half])
		wg.Wait()
		err = errors.Join(err, other)
	} else {
		err = read(refs, out)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get messages: %w", err)
	}
	return out, nil
}

// getRefsSplit is the least number of messages each half of a split
// GetRefs reads: fewer are not worth a goroutine.
const getRefsSplit = 3

// Window selects the newest messages of a channel.
type Window struct {
	// Limit is the most messages to return.
	Limit int
	// MaxScan, when positive, bounds how many messages are examined, so a
	// filter that matches rarely cannot turn a read into a scan of the
	// whole channel.
	MaxScan int
	// Keep filters the messages; nil keeps all.
	Keep func(*Message) bool
	// Since, when set, is the id of the oldest message that may be
	// returned: the walk stops at the first message sorting before it.
	Since string
}

// Recent returns the newest messages of a channel that w selects, oldest
// first. It walks backwards from the newest message, so its cost follows
// the window, not the size of the channel.
func (s *Store) Recent(channel string, w Window) ([]*Message, error) {
	if w.Limit <= 0 {
		return nil, nil
	}
	var since []byte
	if w.Since != "" {
		u, err := uuid.Parse(w.Since)
		if err != nil {
			return nil, fmt.Errorf("%w: window start %q is not a message id", ErrInvalid, w.Since)
		}
		since = messageKey(channel, u)
	}
	var out []*Message
	err := s.db.View(func(txn *badger.Txn) error {
		prefix := messagePrefix(channel)
		it := txn.NewIterator(badger.IteratorOptions{Reverse: true, Prefix: prefix, PrefetchValues: true, PrefetchSize: min(w.Limit, 64)})
		defer it.Close()
		scanned := 0
		for it.Seek(prefixEnd(prefix)); it.Valid() && len(out) < w.Limit; it.Next() {
			if w.MaxScan > 0 && scanned >= w.MaxScan {
				break
			}
			if since != nil && bytes.Compare(it.Item().Key(), since) < 0 {
				break
			}
			scanned++
			m := new(Message)
			if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, m) }); err != nil {
				return fmt.Errorf("decode %x: %w", it.Item().Key(), err)
			}
			if w.Keep == nil || w.Keep(m) {
				out = append(out, m)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: recent %s: %w", channel, err)
	}
	slices.Reverse(out)
	return out, nil
}

// Scan calls fn with the messages of a channel that sort after the message
// id after ("" for all of them), oldest first, until fn returns false or an
// error. Its cost follows what fn reads, not the size of the channel.
func (s *Store) Scan(channel, after string, fn func(*Message) (more bool, err error)) error {
	prefix := messagePrefix(channel)
	start := prefix
	if after != "" {
		u, err := uuid.Parse(after)
		if err != nil {
			return fmt.Errorf("%w: scan start %q is not a message id", ErrInvalid, after)
		}
		start = append(messageKey(channel, u), 0)
	}
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, PrefetchValues: true, PrefetchSize: 64})
		defer it.Close()
		for it.Seek(start); it.Valid(); it.Next() {
			m := new(Message)
			if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, m) }); err != nil {
				return fmt.Errorf("decode %x: %w", it.Item().Key(), err)
			}
			more, err := fn(m)
			if err != nil || !more {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: scan %s: %w", channel, err)
	}
	return nil
}

// RecentTools returns the newest tool results of a channel, oldest first,
// read through the channel's tool index (so a channel with few tool calls
// among many messages costs no scan).
func (s *Store) RecentTools(channel string, limit int) ([]*Message, error) {
	if limit <= 0 {
		return nil, nil
	}
	var out []*Message
	err := s.db.View(func(txn *badger.Txn) error {
		prefix := toolIndexPrefix(channel)
		it := txn.NewIterator(badger.IteratorOptions{Reverse: true, Prefix: prefix})
		defer it.Close()
		for it.Seek(prefixEnd(prefix)); it.Valid() && len(out) < limit; it.Next() {
			id, err := uuid.FromBytes(it.Item().Key()[len(prefix):])
			if err != nil {
				return err
			}
			item, err := txn.Get(messageKey(channel, id))
			if errors.Is(err, badger.ErrKeyNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			m := new(Message)
			if err := item.Value(func(v []byte) error { return json.Unmarshal(v, m) }); err != nil {
				return err
			}
			out = append(out, m)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: recent tools %s: %w", channel, err)
	}
	slices.Reverse(out)
	return out, nil
}

// Channels lists every channel that has messages, in name order.
func (s *Store) Channels() ([]Channel, error) {
	var out []Channel
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(prefixChannel), PrefetchValues: true})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			var c Channel
			if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, &c) }); err != nil {
				return err
			}
			out = append(out, c)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: channels: %w", err)
	}
	return out, nil
}

// PutTrace keeps the last prompt-packet trace of a channel.
func (s *Store) PutTrace(channel string, trace []byte) error {
	if err := s.guard.check(); err != nil {
		return fmt.Errorf("store: put trace %s: %w", channel, err)
	}
	if err := s.db.Update(func(txn *badger.Txn) error { return txn.Set(traceKey(channel), trace) }); err != nil {
		return fmt.Errorf("store: put trace %s: %w", channel, err)
	}
	return nil
}

// Trace returns the last prompt-packet trace of a channel.
func (s *Store) Trace(channel string) ([]byte, error) {
	var out []byte
	err := s.db.View(func(txn *badger.Txn) error {
		it, err := txn.Get(traceKey(channel))
		if err != nil {
			return err
		}
		out, err = it.ValueCopy(nil)
		return err
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, fmt.Errorf("store: trace of %s: %w", channel, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: trace %s: %w", channel, err)
	}
	return out, nil
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
