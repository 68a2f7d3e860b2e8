package bridge

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

func TestImagesAreKeptStickersAndVoiceNamed(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, func(o *Options) {
			o.DataDir = dir
			o.Manners.ImageMaxBytes, o.Manners.ImagesMaxBytes = 64, 80
		})
		defer r.stop()
		png := func(fill byte, n int) *Media {
			data := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, n)...)
			for i := 8; i < len(data); i++ {
				data[i] = fill
			}
			return &Media{Name: "a.png", Fetch: func(context.Context, int64) ([]byte, error) { return data, nil }}
		}
		r.say(grp, alice, Part{Kind: PartImage, Media: png('a', 40)}, text("look"))
		r.say(grp, alice, Part{Kind: PartImage, Media: png('b', 200)})
		r.say(grp, alice, Part{Kind: PartImage, Media: &Media{Name: "x.txt", Fetch: func(context.Context, int64) ([]byte, error) { return []byte("plain text"), nil }}})
		r.say(grp, alice, Part{Kind: PartSticker, Text: "😺 cats"}, Part{Kind: PartVoice, Media: &Media{Duration: 3 * time.Second}}, Part{Kind: PartFace, Text: "178"})
		r.say(grp, bob, Part{Kind: PartImage, Media: png('c', 40)})
		synctest.Wait()
		stored, _, _ := r.agent.snapshot()
		ref := regexp.MustCompile(`^%\[images/t/[0-9a-f]{24}\.png\] look$`)
		if !ref.MatchString(stored[0].Text) {
			t.Errorf("kept image: %q", stored[0].Text)
		}
		if !strings.Contains(stored[1].Text, "over the 64-byte limit") || !strings.Contains(stored[2].Text, "not an image") {
			t.Errorf("refused images: %q, %q", stored[1].Text, stored[2].Text)
		}
		if stored[3].Text != "[sticker 😺 cats] [voice message, 3s] [face 178]" {
			t.Errorf("named: %q", stored[3].Text)
		}
		files, _ := os.ReadDir(filepath.Join(dir, ImagesDir, "t"))
		if len(files) != 1 {
			t.Errorf("kept %d files, want 1: the quota of 80 bytes holds one 48-byte image: the older went when the newer came", len(files))
		}
	})
}

// The reference keep writes is the one Images reads: a kept image comes
// back with its type, a reference outside the kept images does not.
func TestKeptImagesAreLoadedByTheirReference(t *testing.T) {
	dir := t.TempDir()
	k := newImageKeeper(dir, "qq", 1<<20, 1<<20)
	data := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 32)...)
	ref := k.keep(context.Background(), grp, &Media{Fetch: func(context.Context, int64) ([]byte, error) { return data, nil }})
	if !strings.HasPrefix(ref, "%[") {
		t.Fatalf("not kept: %s", ref)
	}
	if err := os.WriteFile(filepath.Join(dir, "secret.png"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	text := "look " + ref + " and %[images/qq/../../secret.png] and %[" + ImagesDir + "/qq/" + strings.Repeat("0", 24) + ".png]"
	got := Images(dir, 4)(text)
	if len(got) != 1 || got[0].MIME != "image/png" || string(got[0].Data) != string(data) || "%["+got[0].Ref+"]" != ref {
		t.Fatalf("images of %q = %+v", text, got)
	}
	if got := Images(dir, 0)(text); len(got) != 0 {
		t.Errorf("max 0 loaded %d", len(got))
	}
}

// distinctPNG is an image of n bytes, different for each seed.
func distinctPNG(seed, n int) []byte {
	data := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, n)...)
	for i := 8; i < len(data); i++ {
		data[i] = byte(seed*31 + i)
	}
	return data
}

// dirSize is the bytes of the files in dir.
func dirSize(t *testing.T, dir string) int64 {
	var n int64
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if info, err := e.Info(); err == nil {
			n += info.Size()
		}
	}
	return n
}

// A stranger's flood of images on a small disk: images are kept while the
// disk keeps the media floor free after them, then each is named "not
// saved: disk low" and not even downloaded; every message is stored, and
// the disk never goes below the floor (where the store, whose own
// reserve is lower, would start refusing messages).
func TestImagesStopAboveTheDiskFloor(t *testing.T) {
	dir := t.TempDir()
	const size, floor, disk = 1000, 10_000, 14_500 // room for 4 images above the floor
	var fetched int
	synctest.Test(t, func(t *testing.T) {
		var lowest int64 = disk
		free := func() (uint64, error) {
			f := disk - dirSize(t, filepath.Join(dir, ImagesDir, "t"))
			lowest = min(lowest, f)
			return uint64(f), nil
		}
		r := newRig(t, func(o *Options) {
			o.DataDir = dir
			o.Manners.ImageMaxBytes, o.Manners.ImagesMaxBytes, o.Manners.ChatImagesMaxBytes = size+8, 1<<30, 1<<30
			o.DiskFree, o.MediaFloor = free, floor
		})
		defer r.stop()
		for i := range 45 {
			data := distinctPNG(i, size)
			r.say(grp, User{ID: "666", Name: "stranger"}, text(fmt.Sprint("pic ", i)), Part{Kind: PartImage, Media: &Media{Name: fmt.Sprintf("p%d.png", i),
				Fetch: func(context.Context, int64) ([]byte, error) { fetched++; return data, nil }}})
		}
		synctest.Wait()
		stored, _, _ := r.agent.snapshot()
		if len(stored) != 45 {
			t.Fatalf("stored %d of 45 messages", len(stored))
		}
		kept := 0
		for i, m := range stored {
			switch {
			case strings.Contains(m.Text, "%[images/t/"):
				kept++
			case m.Text != fmt.Sprintf("pic %d [image p%d.png: not saved: disk low]", i, i):
				t.Errorf("message %d: %q", i, m.Text)
			}
		}
		if kept != 4 || fetched != 4 {
			t.Errorf("kept %d, fetched %d, want 4 and 4: the disk had room above the floor for 4", kept, fetched)
		}
		if lowest < floor {
			t.Errorf("free space went down to %d, under the floor of %d", lowest, floor)
		}
	})
}

// One chat's flood stays within its share: its own oldest images go, and
// another chat's image stays.
func TestAChatsImagesStayWithinItsShare(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, func(o *Options) {
			o.DataDir = dir
			o.Manners.ImageMaxBytes, o.Manners.ImagesMaxBytes, o.Manners.ChatImagesMaxBytes = 2000, 1<<30, 3500
		})
		defer r.stop()
		img := func(seed int) Part {
			data := distinctPNG(seed, 992) // 1000 bytes
			return Part{Kind: PartImage, Media: &Media{Name: "p.png", Fetch: func(context.Context, int64) ([]byte, error) { return data, nil }}}
		}
		other := Chat{Kind: Group, ID: "43"}
		r.say(other, alice, img(1000))
		for i := range 20 {
			r.say(grp, User{ID: "666", Name: "stranger"}, img(i))
		}
		r.say(other, alice, img(1000))
		r.say(grp, alice, img(1000)) // the other chat's picture, in the flooded group too
		synctest.Wait()
		stored, _, _ := r.agent.snapshot()
		refs := regexp.MustCompile(`%\[(images/t/[0-9a-f]{24}\.png)\]`)
		for _, m := range stored {
			if !refs.MatchString(m.Text) {
				t.Errorf("not kept: %q", m.Text)
			}
		}
		first := refs.FindStringSubmatch(stored[0].Text)[1]
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(first))); err != nil {
			t.Errorf("the other chat's image went with the flood: %v", err)
		}
		files, _ := os.ReadDir(filepath.Join(dir, ImagesDir, "t"))
		// The group's share holds 3 images: 2 of the flood and the one both
		// chats sent, which stays while either keeps it.
		if len(files) != 3 {
			t.Errorf("%d files kept, want 3: the flooded group's share of 3 images, one of them the other chat's too", len(files))
		}
	})
}
