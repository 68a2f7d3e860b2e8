package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/uuid"
)

// An import larger than one transaction is written in several, committed
// one while the next is built: every message lands once, in order, with
// consecutive arrivals; duplicates inside the batch are skipped across
// transactions; the idempotency answer counts them all; the channel keeps
// the creation time of its first message.
func TestImportChunksPipelined(t *testing.T) {
	// A 1 MB memtable makes a transaction a few hundred messages (at
	// Badger's default of 64 MB it is a few thousand): the batch spans
	// several transactions with a tenth of the messages.
	s, err := Open(Options{InMemory: true, tune: func(o badger.Options) badger.Options { return o.WithMemTableSize(1 << 20).WithValueThreshold(64 << 10) }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const unique, n = 2500, 3000
	// Each imported message writes three keys (message, id, external
	// id) and its share of the transaction's arrival batch.
	if limit := s.db.MaxBatchCount(); 3*unique < 4*limit {
		t.Fatalf("%d messages (three writes each) are not four times the %d writes of a transaction: the pipeline would not fill", unique, limit)
	}
	var msgs []*Message
	for i := range n {
		msgs = append(msgs, &Message{Channel: fmt.Sprintf("c%d", i%unique%3), User: "u", Text: fmt.Sprintf("message %d, long enough that a few hundred fill one transaction", i),
			Time: t0.Add(time.Duration(i) * time.Second), ExternalID: fmt.Sprint(i % unique)}) // the last 500 repeat earlier ones
	}
	ans, added, replayed, err := s.ImportBatch(msgs, Batch{Key: "big", Final: true})
	if err != nil || replayed || len(added) != unique || ans.Added != unique || ans.Skipped != n-unique {
		t.Fatalf("ImportOnce = %+v, %d added, replayed %v, %v", ans, len(added), replayed, err)
	}
	got, cur, err := s.Since(0, 100000)
	if err != nil || len(got) != unique || cur != unique {
		t.Fatalf("Since = %d, %d, %v", len(got), cur, err)
	}
	for i, m := range got {
		if m.ExternalID != fmt.Sprint(i) {
			t.Fatalf("arrival %d is external id %s", i+1, m.ExternalID)
		}
	}
	ans2, _, replayed, err := s.ImportBatch(msgs, Batch{Key: "big", Final: true})
	if err != nil || !replayed || ans2 != ans {
		t.Fatalf("second ImportOnce = %+v, replayed %v, %v", ans2, replayed, err)
	}
	chans, err := s.Channels()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range chans {
		if want := t0.Add(time.Duration(c.Name[1]-'0') * time.Second); !c.Created.Equal(want) {
			t.Errorf("channel %s created %v, want %v", c.Name, c.Created, want)
		}
	}
	if more, err := s.Import(msgs); err != nil || len(more) != 0 {
		t.Fatalf("Import again = %d, %v", len(more), err)
	}
}

// The workers encode each message before it has its id and the id is
// written into the encoding after (import_prepare.go): what is stored is
// byte for byte what encoding/json makes of the message as returned, for
// messages of every shape, and the messages an import skips keep the id
// they came with.
func TestImportStoresJSONOfTheMessage(t *testing.T) {
	s, err := Open(Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	first := &Message{Channel: "c", User: "u", Text: "already here", Time: t0, ExternalID: "x0"}
	if _, err := s.Import([]*Message{first}); err != nil {
		t.Fatal(err)
	}
	var msgs []*Message
	for i := range 3 * prepBlock {
		msgs = append(msgs, &Message{Channel: fmt.Sprintf("c%d", i%(2*prepBlock)%3), Role: RoleAssistant, User: "cyan", UserID: "42", Kind: "group",
			Text: fmt.Sprintf("<b>%d</b> & \u2028 \"quoted\" 汉字 \xff", i), Time: t0.Add(time.Duration(i/7) * time.Millisecond),
			ReplyTo: "r", Step: i % 2, Part: i % 3, Quotes: []string{"q"}, ToolCalls: []ToolCall{{ID: "t", Name: "n", Arguments: "{}"}},
			ExternalID: fmt.Sprintf("x%d", i%(2*prepBlock))})
	}
	again := &Message{ID: "kept", Channel: "c", Text: "already here", Time: t0, ExternalID: "x0"}
	msgs = append(msgs, again)
	added, err := s.Import(msgs)
	if err != nil {
		t.Fatal(err)
	}
	if len(added) != 2*prepBlock {
		t.Fatalf("added %d, want %d", len(added), 2*prepBlock)
	}
	if again.ID != "kept" {
		t.Errorf("a skipped message's id became %q", again.ID)
	}
	for _, m := range msgs[2*prepBlock : 3*prepBlock] {
		if m.ID != "" {
			t.Fatalf("a duplicate inside the import got id %q", m.ID)
		}
	}
	for _, m := range added {
		want, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		u := uuid.MustParse(m.ID)
		err = s.db.View(func(txn *badger.Txn) error {
			it, err := txn.Get(messageKey(m.Channel, u))
			if err != nil {
				return err
			}
			got, err := it.ValueCopy(nil)
			if err == nil && !bytes.Equal(got, want) {
				t.Errorf("stored\n%s\nwant\n%s", got, want)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// A message given twice in one import (the same pointer) is stored once,
// with the id it is given the first time: the workers encoding it never
// read the id importChunks writes beside them (go test -race).
func TestImportTheSameMessageTwice(t *testing.T) {
	s, err := Open(Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var msgs []*Message
	for i := range 4 * prepBlock {
		msgs = append(msgs, &Message{Channel: "c", Text: fmt.Sprint(i), Time: t0.Add(time.Duration(i) * time.Second), ExternalID: fmt.Sprint(i)})
	}
	for i := range prepBlock {
		msgs = append(msgs, msgs[i])
	}
	added, err := s.Import(msgs)
	if err != nil || len(added) != 4*prepBlock {
		t.Fatalf("Import = %d, %v", len(added), err)
	}
	got, err := s.Get(msgs[0].ID)
	if err != nil || got.Text != "0" || got.ID != msgs[0].ID {
		t.Fatalf("Get(%s) = %+v, %v", msgs[0].ID, got, err)
	}
}
