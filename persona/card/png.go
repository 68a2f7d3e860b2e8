package card

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
	"unicode/utf8"
)

// pngSignature starts every PNG file.
var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// IsPNG reports whether data starts like a PNG file.
func IsPNG(data []byte) bool { return bytes.HasPrefix(data, pngSignature) }

// Chunk is one PNG chunk.
type Chunk struct {
	Type string // four letters: "IHDR", "tEXt", …
	Data []byte
}

// ReadChunks splits a PNG file into its chunks, checking the signature,
// each chunk's length and CRC, and that it ends with IEND. Data after IEND
// is ignored, as PNG readers do.
func ReadChunks(data []byte) ([]Chunk, error) {
	if !IsPNG(data) {
		return nil, errors.New("not a PNG file (it does not start with the PNG signature)")
	}
	var chunks []Chunk
	off := len(pngSignature)
	for {
		if len(data)-off < 12 {
			return nil, fmt.Errorf("the PNG is cut short at byte %d (no IEND chunk): the file is incomplete", off)
		}
		n := binary.BigEndian.Uint32(data[off:])
		typ := data[off+4 : off+8]
		if n > 1<<31-1 || uint64(n) > uint64(len(data)-off-12) {
			return nil, fmt.Errorf("the PNG's %q chunk at byte %d claims %d bytes, more than the file holds: the file is damaged or incomplete", printable(typ), off, n)
		}
		if !validType(typ) {
			return nil, fmt.Errorf("the PNG has a chunk with the invalid type %q at byte %d: the file is damaged", printable(typ), off)
		}
		body := data[off+8 : off+8+int(n)]
		crc := binary.BigEndian.Uint32(data[off+8+int(n):])
		if crc32.Update(crc32.ChecksumIEEE(typ), crc32.IEEETable, body) != crc {
			return nil, fmt.Errorf("the PNG's %q chunk at byte %d has a bad checksum: the file is damaged", typ, off)
		}
		chunks = append(chunks, Chunk{Type: string(typ), Data: body})
		off += 12 + int(n)
		if string(typ) == "IEND" {
			break
		}
	}
	if len(chunks) == 0 || chunks[0].Type != "IHDR" {
		return nil, errors.New("the PNG does not start with an IHDR chunk: the file is damaged")
	}
	return chunks, nil
}

func validType(t []byte) bool {
	for _, c := range t {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

func printable(b []byte) string {
	return strings.ToValidUTF8(strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, string(b)), "?")
}

// EncodeChunks writes chunks as a PNG file.
func EncodeChunks(chunks []Chunk) []byte {
	size := len(pngSignature)
	for _, c := range chunks {
		size += 12 + len(c.Data)
	}
	out := make([]byte, 0, size)
	out = append(out, pngSignature...)
	for _, c := range chunks {
		out = binary.BigEndian.AppendUint32(out, uint32(len(c.Data)))
		out = append(out, c.Type...)
		out = append(out, c.Data...)
		crc := crc32.Update(crc32.ChecksumIEEE([]byte(c.Type)), crc32.IEEETable, c.Data)
		out = binary.BigEndian.AppendUint32(out, crc)
	}
	return out
}

// Text is a decoded text chunk (tEXt, zTXt or iTXt).
type Text struct {
	Keyword string
	Text    string
}

// maxInflated bounds what one compressed text chunk may inflate to.
const maxInflated = MaxJSONBytes * 2

// TextOf decodes a text chunk: tEXt (Latin-1), zTXt (zlib, Latin-1) or
// iTXt (UTF-8, maybe zlib). ok is false for chunks of other types.
func TextOf(c Chunk) (t Text, ok bool, err error) {
	switch c.Type {
	case "tEXt", "zTXt", "iTXt":
	default:
		return Text{}, false, nil
	}
	kw, rest, found := bytes.Cut(c.Data, []byte{0})
	if !found || len(kw) == 0 || len(kw) > 79 {
		return Text{}, true, fmt.Errorf("a %s chunk without a valid keyword", c.Type)
	}
	t.Keyword = latin1(kw)
	switch c.Type {
	case "tEXt":
		t.Text = latin1(rest)
	case "zTXt":
		if len(rest) < 1 || rest[0] != 0 {
			return t, true, fmt.Errorf("the zTXt chunk %q uses an unknown compression method", t.Keyword)
		}
		raw, err := inflate(rest[1:])
		if err != nil {
			return t, true, fmt.Errorf("the zTXt chunk %q: %w", t.Keyword, err)
		}
		t.Text = latin1(raw)
	case "iTXt":
		if len(rest) < 2 {
			return t, true, fmt.Errorf("the iTXt chunk %q is cut short", t.Keyword)
		}
		compressed, method := rest[0], rest[1]
		rest = rest[2:]
		// Language tag and translated keyword, each ended by a NUL.
		for range 2 {
			var ok bool
			if _, rest, ok = bytes.Cut(rest, []byte{0}); !ok {
				return t, true, fmt.Errorf("the iTXt chunk %q is cut short", t.Keyword)
			}
		}
		switch {
		case compressed == 0:
		case compressed == 1 && method == 0:
			raw, err := inflate(rest)
			if err != nil {
				return t, true, fmt.Errorf("the iTXt chunk %q: %w", t.Keyword, err)
			}
			rest = raw
		default:
			return t, true, fmt.Errorf("the iTXt chunk %q uses an unknown compression", t.Keyword)
		}
		if !utf8.Valid(rest) {
			return t, true, fmt.Errorf("the iTXt chunk %q is not UTF-8", t.Keyword)
		}
		t.Text = string(rest)
	}
	return t, true, nil
}

func inflate(b []byte) ([]byte, error) {
	r, err := zlib.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("broken compressed text: %w", err)
	}
	defer r.Close()
	out, err := io.ReadAll(io.LimitReader(r, maxInflated+1))
	if err != nil {
		return nil, fmt.Errorf("broken compressed text: %w", err)
	}
	if len(out) > maxInflated {
		return nil, fmt.Errorf("the compressed text inflates past %d bytes", maxInflated)
	}
	return out, nil
}

func latin1(b []byte) string {
	ascii := true
	for _, c := range b {
		if c >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return string(b)
	}
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}

// TextChunk makes a tEXt chunk. The text must be Latin-1 (card data is
// base64, which is ASCII).
func TextChunk(keyword, text string) Chunk {
	data := make([]byte, 0, len(keyword)+1+len(text))
	data = append(data, keyword...)
	data = append(data, 0)
	data = append(data, text...)
	return Chunk{Type: "tEXt", Data: data}
}

// isCardChunk reports the text chunks a card lives in: chara, ccv3 and the
// chara-ext-asset_ chunks (keywords compared without case, as SillyTavern
// does).
func isCardChunk(keyword string) bool {
	k := strings.ToLower(keyword)
	return k == "chara" || k == "ccv3" || strings.HasPrefix(k, assetPrefix)
}

// assetPrefix starts the keyword of a PNG-embedded V3 asset
// ("chara-ext-asset_:path", read as the URI "__asset:path").
const assetPrefix = "chara-ext-asset_"

// StripCard returns the PNG without its card chunks: the picture alone.
func StripCard(chunks []Chunk) []Chunk {
	out := make([]Chunk, 0, len(chunks))
	for _, c := range chunks {
		if t, ok, err := TextOf(c); ok && err == nil && isCardChunk(t.Keyword) {
			continue
		}
		out = append(out, c)
	}
	return out
}

// WithText inserts text chunks just before IEND, where SillyTavern puts
// them, after removing the card chunks the PNG already had.
func WithText(chunks []Chunk, texts ...Chunk) []Chunk {
	out := StripCard(chunks)
	end := len(out)
	if end > 0 && out[end-1].Type == "IEND" {
		end--
	}
	res := make([]Chunk, 0, len(out)+len(texts))
	res = append(res, out[:end]...)
	res = append(res, texts...)
	return append(res, out[end:]...)
}
