package recall

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// The lexical snapshot is the in-memory corpus written to a file (in
// Options.CacheDir) with the arrival cursor it has read up to, so a
// restart opens it and reads only the messages stored after it instead of
// tokenizing the whole history again. It is a cache: a missing, torn
// (checksum), foreign (another version) or stale (its cursor is past the
// store's, or its last message is gone) file is thrown away and the index
// is rebuilt from the store, recall answering from what is read meanwhile.
//
// Layout (little-endian, varints): magic, version, cursor, sessions,
// channels (each a length and its name), documents (id, channel, session,
// position, speaker+1, time, timely, length in terms), terms (each its
// word and its postings, documents as deltas, with their counts), and a
// CRC-32 of all before it. Channel orders and the id map are derived.
// Version 2 added the lengths (counts are capped in memory, so they no
// longer sum to them); version 3 came with Tokenize's irregular verbs
// (its terms changed). A file of an older version is rebuilt from the
// store.
const (
	lexSnapMagic   = "cyanlex\x00"
	lexSnapVersion = 3
)

func (x *Index) lexPath() string {
	if x.o.CacheDir == "" {
		return ""
	}
	return filepath.Join(x.o.CacheDir, "lexical.snap")
}

// saveLexical writes the lexical snapshot when the corpus has changed
// since the last one. It holds the corpus for reading while it writes.
func (x *Index) saveLexical() error {
	path := x.lexPath()
	if path == "" || !x.lexReady.Load() || !x.lexDirty.Swap(false) {
		return nil
	}
	err := x.writeLexical(path)
	if err != nil {
		x.lexDirty.Store(true)
	}
	return err
}

func (x *Index) writeLexical(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	fail := func(err error) error {
		f.Close()
		_ = os.Remove(tmp)
		return fmt.Errorf("recall: write lexical snapshot: %w", err)
	}
	crc := crc32.NewIEEE()
	w := bufio.NewWriterSize(io.MultiWriter(f, crc), 1<<20)
	var buf [binary.MaxVarintLen64]byte
	uv := func(v uint64) { w.Write(buf[:binary.PutUvarint(buf[:], v)]) }
	str := func(s string) { uv(uint64(len(s))); w.WriteString(s) }

	c := x.c
	c.mu.RLock()
	w.WriteString(lexSnapMagic)
	uv(lexSnapVersion)
	uv(x.lexCur.Load())
	uv(uint64(c.sessions))
	uv(uint64(len(c.chans)))
	for _, ch := range c.chans {
		str(ch)
	}
	uv(uint64(len(c.docs)))
	for i, d := range c.docs {
		w.Write(d.id[:])
		uv(uint64(d.ch))
		uv(uint64(d.sess))
		uv(uint64(d.pos))
		uv(uint64(d.speaker + 1)) // noDoc is 0
		uv(uint64(d.t))
		if d.timely {
			w.WriteByte(1)
		} else {
			w.WriteByte(0)
		}
		uv(uint64(c.lex.docLen.at(uint32(i))))
	}
	words := make([]string, len(c.lex.posts))
	for t, id := range c.lex.terms {
		words[id] = t
	}
	uv(uint64(len(words)))
	for id, t := range words {
		str(t)
		ps := c.lex.posts[id]
		uv(uint64(len(ps)))
		prev := uint32(0)
		for _, p := range ps {
			uv(uint64(p.doc() - prev))
			uv(uint64(p.tf()))
			prev = p.doc()
		}
	}
	c.mu.RUnlock()
	if err := w.Flush(); err != nil {
		return fail(err)
	}
	binary.LittleEndian.PutUint32(buf[:4], crc.Sum32())
	if _, err := f.Write(buf[:4]); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

// errSnap marks a snapshot that cannot be used.
var errSnap = errors.New("recall: lexical snapshot")

// readLexical reads a snapshot into a fresh corpus and returns it with its
// cursor.
func readLexical(path string) (*corpus, uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	if len(b) < len(lexSnapMagic)+4 || string(b[:len(lexSnapMagic)]) != lexSnapMagic {
		return nil, 0, fmt.Errorf("%w: not a snapshot", errSnap)
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.ChecksumIEEE(body) != sum {
		return nil, 0, fmt.Errorf("%w: torn (checksum)", errSnap)
	}
	r := &snapReader{b: body[len(lexSnapMagic):]}
	if v := r.uv(); v != lexSnapVersion {
		return nil, 0, fmt.Errorf("%w: version %d, not %d", errSnap, v, lexSnapVersion)
	}
	cursor := r.uv()
	c := newCorpus()
	c.sessions = uint32(r.uv())
	nch := r.count(1)
	for range nch {
		ch := r.str()
		c.chIdx[ch] = uint32(len(c.chans))
		c.chans = append(c.chans, ch)
	}
	c.order = make([][]uint32, nch)
	c.chLen = make([]uint64, nch)
	ndocs := r.count(23)
	if ndocs > maxDocs {
		return nil, 0, fmt.Errorf("%w: %d documents, more than the index numbers", errSnap, ndocs)
	}
	c.docs = make([]docMeta, ndocs)
	var docLen lengths
	docLen.short = make([]uint8, ndocs)
	var total uint64
	c.byID.reserve(c.docs, ndocs)
	for i := range c.docs {
		d := &c.docs[i]
		copy(d.id[:], r.take(16))
		d.ch, d.sess, d.pos = uint32(r.uv()), uint32(r.uv()), uint32(r.uv())
		d.speaker = uint32(r.uv()) - 1
		d.t = int64(r.uv())
		d.timely = r.take(1)[0] == 1
		n := uint32(r.uv())
		docLen.set(uint32(i), n)
		total += uint64(n)
		if r.err == nil && int(d.ch) < nch {
			c.chLen[d.ch] += uint64(n)
		}
		if r.err == nil && int(d.ch) >= nch {
			r.err = fmt.Errorf("%w: channel %d of %d", errSnap, d.ch, nch)
		}
		if r.err != nil {
			return nil, 0, r.err
		}
		c.byID.put(c.docs, uint32(i))
		c.order[d.ch] = append(c.order[d.ch], uint32(i))
	}
	for ch, o := range c.order {
		slices.SortFunc(o, func(a, b uint32) int { return int(c.docs[a].pos) - int(c.docs[b].pos) })
		for p, d := range o {
			if int(c.docs[d].pos) != p {
				return nil, 0, fmt.Errorf("%w: channel %d's order has a hole", errSnap, ch)
			}
		}
	}
	l := c.lex
	l.docLen, l.total = docLen, total
	nterms := r.count(2)
	l.posts = make([][]posting, nterms)
	for id := range nterms {
		t := r.str()
		n := r.count(2)
		ps := make([]posting, n)
		doc := uint64(0)
		for k := range ps {
			doc += r.uv()
			tf := r.uv()
			switch {
			case r.err != nil:
			case doc >= uint64(ndocs):
				r.err = fmt.Errorf("%w: posting of document %d of %d", errSnap, doc, ndocs)
			case k > 0 && ps[k-1].doc() >= uint32(doc):
				r.err = fmt.Errorf("%w: term %d's postings out of order", errSnap, id)
			}
			if r.err != nil {
				return nil, 0, r.err
			}
			ps[k] = mkPosting(uint32(doc), uint32(tf))
		}
		l.terms[t] = uint32(id)
		l.posts[id] = ps
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%w: %d bytes after the end", errSnap, len(r.b))
	}
	if r.err != nil {
		return nil, 0, r.err
	}
	return c, cursor, nil
}

// snapReader reads a snapshot's body; the first short read sets err and
// every read after it returns zeros.
type snapReader struct {
	b   []byte
	err error
}

func (r *snapReader) uv() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = fmt.Errorf("%w: short", errSnap)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *snapReader) take(n int) []byte {
	if r.err != nil || len(r.b) < n {
		if r.err == nil {
			r.err = fmt.Errorf("%w: short", errSnap)
		}
		return make([]byte, n)
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *snapReader) str() string { return string(r.take(r.count(1))) }

// count reads a length whose items take at least min bytes each, so a
// damaged length cannot ask for more memory than the file could hold.
func (r *snapReader) count(min int) int {
	n := r.uv()
	if r.err == nil && n > uint64(len(r.b)/min) {
		r.err = fmt.Errorf("%w: a count of %d in %d bytes", errSnap, n, len(r.b))
		return 0
	}
	return int(n)
}
