package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/internal/llmtest"
	"github.com/cyan-agent/cyan/internal/onebottest"
	"github.com/cyan-agent/cyan/internal/smallfs"
)

// TestQQImageFloodOnASmallDisk: a stranger sends 45 pictures of 4.9 MB to
// a group while the data dir's disk has room for a few of them above
// store.min_free_mb, and the owner goes on writing. Pictures are kept
// until the disk is 64 MB above the store's reserve, then each is named
// "not saved: disk low" and not downloaded; no group message and no owner
// message is lost, and the owner never gets a 507. The chat's own share
// is set above the disk, so the floor alone holds the flood.
func TestQQImageFloodOnASmallDisk(t *testing.T) {
	t.Parallel()
	mnt := smallfs.Mount(t, 448<<20)
	fake, url := fakeLLM(t)
	fake.SetDefault(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "noted"} })
	const imageSize = 4_900_000
	images := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seed, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/"), ".png"))
		data := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, imageSize-8)...)
		for i := 8; i < len(data); i += 4096 {
			data[i] = byte(seed) // a different picture each time
			data[i+1] = byte(seed >> 8)
		}
		w.Header().Set("Content-Type", "image/png")
		w.Write(data)
	}))
	defer images.Close()
	dir := filepath.Join(mnt, "data")
	cfg := configFile(t, "store: {min_free_mb: 250}\npermissions:\n  owners: [\"id:qq:1001\"]\n"+
		"bridges:\n  onebot:\n    - {name: qq, mode: reverse, access_token: tok, manners: {chat_images_max_bytes: 1073741824}, media_origins: [\""+strings.TrimPrefix(images.URL, "http://")+"\"]}\n"+qqManners)
	// Leave the store's reserve, its space reserve and write-ahead log
	// (16 MB each), the 64 MB pictures never take, and about 8 pictures.
	if _, err := smallfs.Fill(filepath.Join(mnt, "filler"), (250+16+16+64+40)<<20); err != nil {
		t.Fatal(err)
	}
	r := &qqRig{fake: fake, dir: dir}
	r.envv = env(dir, url, cfg)
	r.d = start(t, dir, r.envv)
	r.impl = &onebottest.Impl{SelfID: botQQ, Nickname: "青蓝", Token: "tok"}
	r.connect(t)

	stranger := onebottest.Sender{UserID: 666, Nickname: "flood"}
	owner := 0
	for i := range 45 {
		if _, err := r.impl.Group(groupQ, stranger, onebottest.Text(fmt.Sprint("pic ", i)), onebottest.Image(fmt.Sprintf("%d.png", i), fmt.Sprintf("%s/%d.png", images.URL, i))); err != nil {
			t.Fatal(err)
		}
		r.stored(t, i+1) // stored before the next: the flood is paced by the daemon, not by memory
		if i%3 == 2 {
			code, out, err := r.d.post("/api/v1/messages", map[string]any{"channel": "home", "text": fmt.Sprint("owner writes ", i)})
			if err != nil || code != 200 {
				t.Fatalf("the owner's message after picture %d: %d %v %v\n%s", i, code, out, err, r.d.stderr.String())
			}
			owner++
		}
	}
	stored := r.stored(t, 45)
	kept, low := 0, 0
	for i, m := range stored {
		text := fmt.Sprint(m["text"])
		switch {
		case strings.Contains(text, "%[images/qq/"):
			kept++
		case text == fmt.Sprintf("pic %d [image %d.png: not saved: disk low]", i, i):
			low++
		default:
			t.Errorf("message %d: %q", i, text)
		}
	}
	if kept == 0 || low == 0 || kept+low != 45 {
		t.Errorf("%d pictures kept and %d skipped for a low disk, want some of each, 45 in all", kept, low)
	}
	var home int
	for _, m := range r.d.messages(t, "home") {
		if m["role"] == "user" {
			home++
		}
	}
	if home != owner {
		t.Errorf("home holds %d of the owner's %d messages", home, owner)
	}
	free, err := smallfs.Free(dir)
	if err != nil {
		t.Fatal(err)
	}
	if free < 250<<20 {
		t.Errorf("%d MB free, under store.min_free_mb", free>>20)
	}
	t.Logf("%d pictures kept, %d skipped for a low disk, %d owner messages stored, %d MB free at the end", kept, low, owner, free>>20)
}
