package card

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"testing"
)

// picture is a small real PNG (a 3×2 image), encoded by image/png.
func picture(t testing.TB) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, 3, 2))
	img.Set(1, 1, color.NRGBA{200, 10, 10, 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// rawChunk writes one PNG chunk by hand, independently of EncodeChunks.
func rawChunk(typ string, data []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, uint32(len(data)))
	b.WriteString(typ)
	b.Write(data)
	binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	return b.Bytes()
}

// withChunks inserts chunks before the IEND of a PNG (the last 12 bytes).
func withChunks(pic []byte, chunks ...[]byte) []byte {
	out := append([]byte{}, pic[:len(pic)-12]...)
	for _, c := range chunks {
		out = append(out, c...)
	}
	return append(out, pic[len(pic)-12:]...)
}

func tEXt(keyword, text string) []byte {
	return rawChunk("tEXt", append(append([]byte(keyword), 0), text...))
}

func iTXt(keyword, text string, compress bool) []byte {
	data := append([]byte(keyword), 0)
	body := []byte(text)
	if compress {
		var z bytes.Buffer
		w := zlib.NewWriter(&z)
		w.Write(body)
		w.Close()
		body = z.Bytes()
		data = append(data, 1, 0)
	} else {
		data = append(data, 0, 0)
	}
	data = append(data, []byte("en\x00Chara\x00")...)
	return rawChunk("iTXt", append(data, body...))
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// cardPNG is a picture with a card chunk.
func cardPNG(t testing.TB, keyword, json string) []byte {
	return withChunks(picture(t), tEXt(keyword, b64(json)))
}
