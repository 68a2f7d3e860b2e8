package card

import (
	"bytes"
	"compress/zlib"
	"strings"
	"testing"
)

func TestReadChunks(t *testing.T) {
	pic := picture(t)
	chunks, err := ReadChunks(pic)
	if err != nil {
		t.Fatal(err)
	}
	if chunks[0].Type != "IHDR" || chunks[len(chunks)-1].Type != "IEND" {
		t.Fatalf("chunks: %v", chunks)
	}
	if !bytes.Equal(EncodeChunks(chunks), pic) {
		t.Error("EncodeChunks(ReadChunks(p)) != p")
	}
	// Bytes after IEND are ignored.
	if _, err := ReadChunks(append(append([]byte{}, pic...), "trailing junk"...)); err != nil {
		t.Errorf("trailing data: %v", err)
	}
}

func TestReadChunksErrors(t *testing.T) {
	pic := picture(t)
	badCRC := append([]byte{}, pic...)
	badCRC[len(pic)-13] ^= 0xff // a byte of the last data chunk's CRC
	badLen := append([]byte{}, pic...)
	copy(badLen[8:12], []byte{0x7f, 0, 0, 0})
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"not a PNG", []byte("GIF89a…"), "not a PNG file"},
		{"empty", nil, "not a PNG file"},
		{"cut short", pic[:len(pic)-20], "incomplete"},
		{"signature only", pic[:8], "cut short"},
		{"bad checksum", badCRC, "bad checksum"},
		{"length past the end", badLen, "more than the file holds"},
		{"no IHDR", append(append([]byte{}, pngSignature...), rawChunk("IEND", nil)...), "does not start with an IHDR"},
		{"bad type", append(append([]byte{}, pngSignature...), rawChunk("I\x00DR", nil)...), "invalid type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadChunks(tt.data)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestTextOf(t *testing.T) {
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write([]byte("caf\xe9"))
	w.Close()
	pic := withChunks(picture(t),
		tEXt("Comment", "caf\xe9"), // Latin-1
		rawChunk("zTXt", append([]byte("Title\x00\x00"), z.Bytes()...)),
		iTXt("chara", "青蓝 UTF-8", false),
		iTXt("ccv3", "compressed 青蓝", true),
	)
	chunks, err := ReadChunks(pic)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range chunks {
		tx, ok, err := TextOf(c)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			got = append(got, tx.Keyword+"="+tx.Text)
		}
	}
	want := "Comment=café|Title=café|chara=青蓝 UTF-8|ccv3=compressed 青蓝"
	if strings.Join(got, "|") != want {
		t.Fatalf("got %q\nwant %q", strings.Join(got, "|"), want)
	}
	for _, bad := range []Chunk{
		{Type: "tEXt", Data: []byte("no separator")},
		{Type: "zTXt", Data: []byte("k\x00\x00not zlib")},
		{Type: "iTXt", Data: []byte("k\x00\x01\x00en\x00x\x00not zlib")},
		{Type: "iTXt", Data: []byte("k\x00\x00\x00en")},
		{Type: "iTXt", Data: []byte("k\x00\x00\x00\x00\x00\xff\xfe")},
	} {
		if _, ok, err := TextOf(bad); !ok || err == nil {
			t.Errorf("%q: ok=%v err=%v, want an error", bad.Data, ok, err)
		}
	}
}

func TestWithTextReplacesCardChunks(t *testing.T) {
	pic := withChunks(picture(t), tEXt("Chara", "old"), tEXt("ccv3", "old"), tEXt("Comment", "kept"),
		tEXt("chara-ext-asset_:a.png", "old"))
	chunks, err := ReadChunks(pic)
	if err != nil {
		t.Fatal(err)
	}
	out := WithText(chunks, TextChunk("chara", "new2"), TextChunk("ccv3", "new3"))
	var texts []string
	for _, c := range out {
		if tx, ok, _ := TextOf(c); ok {
			texts = append(texts, tx.Keyword+"="+tx.Text)
		}
	}
	if strings.Join(texts, ",") != "Comment=kept,chara=new2,ccv3=new3" || out[len(out)-1].Type != "IEND" || out[len(out)-2].Type != "tEXt" {
		t.Fatalf("texts %v, last chunks %s %s", texts, out[len(out)-2].Type, out[len(out)-1].Type)
	}
	if _, err := ReadChunks(EncodeChunks(out)); err != nil {
		t.Fatal(err)
	}
}
