package bridge

import (
	"context"
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
	ref := k.keep(context.Background(), &Media{Fetch: func(context.Context, int64) ([]byte, error) { return data, nil }})
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
