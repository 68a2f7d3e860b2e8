package store

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/dgraph-io/badger/v4"
)

// An import's messages are prepared off its write path: workers, one a
// core, look each message's external id up and encode the message while
// importChunks puts the messages prepared before them into the
// transaction and Badger writes the transaction before that. The
// lookups read a snapshot taken after every earlier write of messages
// (the caller holds wmu, and the commits of earlier imports have landed);
// duplicates inside the import are importChunks' to skip, in order.

// prepBlock is how many messages a worker prepares at a time.
const prepBlock = 256

// idHole stands for the message id in an encoded message until
// importChunks gives the message its id: the id is made in the
// import's order, only for messages not skipped, after the encoding.
// encodeMessage writes Message's id first, as `{"id":"…"`, so the id
// is copied over the hole's bytes at idAt.
const idHole = "00000000-0000-0000-0000-000000000000"

var idAt = len(`{"id":"`)

// prepared is one message of an import, made ready to put.
type prepared struct {
	ext    []byte // its external-id key
	stored bool   // that key was stored before the import began
	val    []byte // the message encoded, with idHole for its id (nil when stored)
}

// preparer runs the workers of one import.
type preparer struct {
	msgs  []*Message
	out   []prepared
	ready []chan struct{} // per block: closed once its part of out is filled
	errs  []error         // per block, read after ready
	next  atomic.Int64    // the next block to take
	stop  chan struct{}
	wg    sync.WaitGroup
}

// prepare starts preparing msgs; the caller takes each block with
// block, in order, and ends with close.
func (s *Store) prepare(msgs []*Message) *preparer {
	n := (len(msgs) + prepBlock - 1) / prepBlock
	p := &preparer{msgs: msgs, out: make([]prepared, len(msgs)), ready: make([]chan struct{}, n), errs: make([]error, n), stop: make(chan struct{})}
	for i := range p.ready {
		p.ready[i] = make(chan struct{})
	}
	workers := min(runtime.GOMAXPROCS(0), n, 4)
	for range workers {
		p.wg.Add(1)
		go p.work(s.db)
	}
	return p
}

func (p *preparer) work(db *badger.DB) {
	defer p.wg.Done()
	txn := db.NewTransaction(false)
	defer txn.Discard()
	for {
		b := int(p.next.Add(1) - 1)
		if b >= len(p.ready) {
			return
		}
		select {
		case <-p.stop:
			return
		default:
		}
		p.errs[b] = p.prepareBlock(txn, b)
		close(p.ready[b])
	}
}

func (p *preparer) prepareBlock(txn *badger.Txn, b int) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("prepare messages %d to %d: %v", b*prepBlock+1, (b+1)*prepBlock, r)
		}
	}()
	for i := b * prepBlock; i < min((b+1)*prepBlock, len(p.msgs)); i++ {
		m := p.msgs[i]
		o := &p.out[i]
		o.ext = externalKey(m.Channel, m.ExternalID)
		_, err := txn.Get(o.ext)
		if err == nil {
			o.stored = true
			continue
		}
		if !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		if o.val, err = encodeMessageAs(m, idHole); err != nil {
			return err
		}
		if !bytes.HasPrefix(o.val[idAt:], []byte(idHole)) {
			return fmt.Errorf("message %d encodes without its id first", i+1)
		}
	}
	return nil
}

// block waits for block b and returns its messages' preparations.
func (p *preparer) block(b int) ([]prepared, error) {
	<-p.ready[b]
	if p.errs[b] != nil {
		return nil, p.errs[b]
	}
	return p.out[b*prepBlock : min((b+1)*prepBlock, len(p.msgs))], nil
}

// close stops the workers and waits for them.
func (p *preparer) close() {
	close(p.stop)
	p.wg.Wait()
}
