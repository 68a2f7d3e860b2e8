package onebot

import (
	"context"
	"encoding/base64"
	"errors"
	"testing"

	"github.com/cyan-agent/cyan/bridge"
)

// Which forms of an image segment are fetched, and how: a URL through the
// fetch policy, base64:// inline data decoded (no network), a file:// or
// bare path never read; the name stored is never an address.
func TestImageSegmentForms(t *testing.T) {
	png := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 8)...)
	var asked []string
	fetch := func(_ context.Context, url string, _ int64) ([]byte, error) {
		asked = append(asked, url)
		return nil, bridge.ErrRefusedAddress
	}
	for _, tc := range []struct {
		name      string
		data      map[string]string
		fetchable bool
		stored    string // the media's name
		asks      string // the URL fetched ("" none)
		inline    []byte
	}{
		{"url", map[string]string{"file": "ABC.jpg", "url": "https://multimedia.nt.qq.com.cn/download?appid=1407"}, true, "ABC.jpg", "https://multimedia.nt.qq.com.cn/download?appid=1407", nil},
		{"url in file", map[string]string{"file": "http://127.0.0.1:7788/api/v1/export"}, true, "export", "http://127.0.0.1:7788/api/v1/export", nil},
		{"base64", map[string]string{"file": "base64://" + base64.StdEncoding.EncodeToString(png)}, true, "", "", png},
		{"file URL", map[string]string{"file": "file:///etc/passwd"}, false, "passwd", "", nil},
		{"bare path", map[string]string{"file": "/home/owner/.ssh/id_rsa"}, false, "/home/owner/.ssh/id_rsa", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked = nil
			p := toPart(Segment{Type: "image", Data: tc.data}, fetch)
			if p.Kind != bridge.PartImage || p.Media == nil {
				t.Fatalf("part %+v", p)
			}
			if p.Media.Name != tc.stored {
				t.Errorf("name %q, want %q", p.Media.Name, tc.stored)
			}
			if (p.Media.Fetch != nil) != tc.fetchable {
				t.Fatalf("fetchable %v, want %v", p.Media.Fetch != nil, tc.fetchable)
			}
			if !tc.fetchable {
				return
			}
			data, err := p.Media.Fetch(context.Background(), 1<<20)
			switch {
			case tc.inline != nil:
				if err != nil || string(data) != string(tc.inline) || len(asked) != 0 {
					t.Errorf("inline: %q %v, asked %v", data, err, asked)
				}
			case !errors.Is(err, bridge.ErrRefusedAddress) || len(asked) != 1 || asked[0] != tc.asks:
				t.Errorf("fetched %v: %v", asked, err)
			}
		})
	}
	big := "base64://" + base64.StdEncoding.EncodeToString(make([]byte, 4096))
	p := toPart(Segment{Type: "image", Data: map[string]string{"file": big}}, fetch)
	if _, err := p.Media.Fetch(context.Background(), 1024); err == nil {
		t.Error("inline data over the limit was taken")
	}
}

// The forward URL's origin is trusted with loopback; a reverse bridge
// trusts only its configured media origins; a bad origin is named.
func TestMediaOrigins(t *testing.T) {
	fwd := mediaOrigins(Options{Mode: "forward", URL: "ws://127.0.0.1:3001", MediaOrigins: []string{"127.0.0.1:6099"}})
	if len(fwd) != 2 || fwd[1] != "ws://127.0.0.1:3001" {
		t.Errorf("forward: %v", fwd)
	}
	if rev := mediaOrigins(Options{Mode: "reverse", URL: "ws://127.0.0.1:3001"}); len(rev) != 0 {
		t.Errorf("reverse: %v", rev)
	}
	for s, ok := range map[string]bool{"127.0.0.1:6099": true, "http://127.0.0.1:6099": true, "[::1]:80": true, "localhost:6099": true,
		"127.0.0.1": false, "http://127.0.0.1:6099/files": false, "ftp://h:1": false, "h:0": false, "": false} {
		if validOrigin(s) != ok {
			t.Errorf("validOrigin(%q) = %v", s, !ok)
		}
	}
}
