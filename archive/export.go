package archive

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"time"
	"unicode/utf8"

	"github.com/dgraph-io/badger/v4"

	"github.com/cyan-agent/cyan/store"
)

// Line is one line of an export (one of its kinds).
type Line struct {
	Type string `json:"type"` // channel, message, compressed, record

	Channel *store.Channel `json:"channel,omitempty"`
	// Message is the stored message's JSON, as it is.
	Message json.RawMessage `json:"message,omitempty"`

	ID         string            `json:"id,omitempty"` // compressed: the message's
	Compressed *store.Compressed `json:"compressed,omitempty"`

	Space    string          `json:"space,omitempty"`
	Key      *string         `json:"key,omitempty"`
	KeyB64   *string         `json:"key_b64,omitempty"`
	Value    json.RawMessage `json:"value,omitempty"`
	ValueB64 *string         `json:"value_b64,omitempty"`
}

// ExportInfo counts what an export wrote.
type ExportInfo struct {
	Channels, Messages, Compressed, Records int
}

// Export writes everything cyan remembers to w as JSON lines (doc.go),
// from one consistent read of the store.
func Export(st *store.Store, w io.Writer, version string, now time.Time) (ExportInfo, error) {
	var info ExportInfo
	bw := bufio.NewWriterSize(w, 1<<20)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(Header{Format: ExportFormat, Version: ExportVersion, Created: now.UTC(), Cyan: version}); err != nil {
		return info, err
	}
	err := st.DB().View(func(txn *badger.Txn) error {
		chans, err := st.ChannelsIn(txn)
		if err != nil {
			return err
		}
		for i := range chans {
			if err := enc.Encode(Line{Type: "channel", Channel: &chans[i]}); err != nil {
				return err
			}
			info.Channels++
		}
		for _, c := range chans {
			err := st.RawMessagesIn(txn, c.Name, func(raw []byte) error {
				info.Messages++
				return enc.Encode(Line{Type: "message", Message: compacted(raw)})
			})
			if err != nil {
				return err
			}
		}
		err = st.CompressedIn(txn, func(id string, c store.Compressed) error {
			info.Compressed++
			return enc.Encode(Line{Type: "compressed", ID: id, Compressed: &c})
		})
		if err != nil {
			return err
		}
		for _, sp := range spaces {
			if err := exportSpace(txn, sp, enc, &info); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return info, fmt.Errorf("archive: export: %w", err)
	}
	return info, nil
}

func exportSpace(txn *badger.Txn, sp space, enc *json.Encoder, info *ExportInfo) error {
	it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(sp.prefix), PrefetchValues: true, PrefetchSize: 64})
	defer it.Close()
	for it.Rewind(); it.Valid(); it.Next() {
		k := it.Item().KeyCopy(nil)[len(sp.prefix):]
		v, err := it.Item().ValueCopy(nil)
		if err != nil {
			return err
		}
		l := Line{Type: "record", Space: sp.name}
		if utf8.Valid(k) {
			s := string(k)
			l.Key = &s
		} else {
			s := base64.StdEncoding.EncodeToString(k)
			l.KeyB64 = &s
		}
		if raw := exact(v); raw != nil {
			l.Value = raw
		} else {
			s := base64.StdEncoding.EncodeToString(v)
			l.ValueB64 = &s
		}
		if err := enc.Encode(l); err != nil {
			return err
		}
		info.Records++
	}
	return nil
}

// exact returns v when it is JSON that an encoder writes back byte for
// byte (compact, HTML-safe as Go writes it), else nil.
func exact(v []byte) json.RawMessage {
	if len(v) == 0 || !json.Valid(v) {
		return nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil || !bytes.Equal(b.Bytes(), v) {
		return nil
	}
	return v
}

// compacted is a message's JSON as an export line carries it: itself, or
// compacted when it was stored otherwise (the store writes it compact).
func compacted(v []byte) json.RawMessage {
	if raw := exact(v); raw != nil {
		return raw
	}
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return nil
	}
	return b.Bytes()
}
