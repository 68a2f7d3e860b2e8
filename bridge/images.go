package bridge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cyan-agent/cyan/llm"
)

// ImagesDir is the folder of kept images under the data dir; a reference
// "%[images/<bridge>/<hash>.<ext>]" names a file in it.
const ImagesDir = "images"

// imageRef is a kept image's reference, as keep writes it.
var imageRef = regexp.MustCompile(`%\[(` + ImagesDir + `/[a-z][a-z0-9_-]{0,31}/[0-9a-f]{24}\.(?:jpg|png|gif|webp|bmp))\]`)

// Images loads the images a text refers to (at most max), for a model
// that accepts them (llm.vision): only files a bridge kept can be named,
// and one gone since is left out.
func Images(dataDir string, max int) func(text string) []llm.Image {
	mimes := map[string]string{".jpg": "image/jpeg", ".png": "image/png", ".gif": "image/gif", ".webp": "image/webp", ".bmp": "image/bmp"}
	return func(text string) []llm.Image {
		var out []llm.Image
		for _, m := range imageRef.FindAllStringSubmatch(text, max) {
			data, err := os.ReadFile(filepath.Join(dataDir, filepath.FromSlash(m[1])))
			if err != nil {
				continue
			}
			out = append(out, llm.Image{MIME: mimes[filepath.Ext(m[1])], Data: data, Ref: m[1]})
		}
		return out
	}
}

// MediaHeadroom is the free space, beyond the store's own reserve
// (store.min_free_mb), that kept images never take: pictures stop this
// far above the point where messages are refused, so a flood of images
// never costs a message.
const MediaHeadroom = 64 << 20

// DiskLow is why an image was not kept when the disk is low: the stored
// message names it "[image …: not saved: disk low]".
const DiskLow = "not saved: disk low"

// imageKeeper keeps a bridge's incoming images in the data dir, each at
// most max bytes, all together at most quota bytes and those of one chat
// at most chatQuota bytes (the oldest go first: a chat's own oldest when
// it is over its share, the bridge's oldest when all are over the
// quota). An image is kept only while the disk keeps floor bytes free
// after it (free reports the disk's free space): below that, images are
// skipped and named, and messages — which the store refuses only at its
// own, lower reserve — go on being stored.
//
// The per-chat accounts are of the images kept since the daemon started
// (what was kept before counts toward quota only).
type imageKeeper struct {
	dir       string // <data dir>/images/<bridge>
	rel       string // images/<bridge>
	max       int64
	quota     int64
	chatQuota int64
	free      func() (uint64, error) // nil: not checked
	floor     uint64

	log *slog.Logger

	mu    sync.Mutex
	total int64
	ready bool
	chats map[Chat]*chatImages
	refs  map[string]int // a file's chats (one picture sent in two chats is kept once)
}

// chatImages are the images kept for one chat, oldest first.
type chatImages struct {
	files []keptFile
	total int64
}

type keptFile struct {
	name string
	size int64
}

func (k *imageKeeper) logger() *slog.Logger {
	if k.log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return k.log
}

func newImageKeeper(dataDir, bridge string, max, quota int64) *imageKeeper {
	if dataDir == "" {
		return nil
	}
	return &imageKeeper{dir: filepath.Join(dataDir, ImagesDir, bridge), rel: ImagesDir + "/" + bridge, max: max, quota: quota,
		chats: map[Chat]*chatImages{}, refs: map[string]int{}}
}

// low reports whether the disk cannot take need more bytes and keep the
// floor free. A disk whose free space cannot be read is not low.
func (k *imageKeeper) low(need int64) bool {
	if k.free == nil {
		return false
	}
	free, err := k.free()
	if err != nil {
		return false
	}
	return free < k.floor || free-k.floor < uint64(max(need, 0))
}

// keep downloads an image of chat c and returns its "%[…]" reference, or
// a short reason it was not kept. On a low disk it is not even
// downloaded.
func (k *imageKeeper) keep(ctx context.Context, c Chat, m *Media) string {
	if k == nil || m == nil || m.Fetch == nil {
		return "not downloadable"
	}
	if m.Size > k.max && k.max > 0 {
		return fmt.Sprintf("%d bytes, over the %d-byte limit", m.Size, k.max)
	}
	if k.low(max(m.Size, k.max)) {
		return DiskLow
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	data, err := m.Fetch(ctx, k.max)
	if err != nil {
		// Why goes to the log only: the stored text is read by the chat,
		// and a stranger's URL must learn nothing from it (no "connection
		// refused", no address, no port — FetchPolicy).
		k.logger().Info("an image was not fetched", "err", err)
		return "not fetched"
	}
	if k.max > 0 && int64(len(data)) > k.max {
		return fmt.Sprintf("over the %d-byte limit", k.max)
	}
	ext := extOf(http.DetectContentType(data))
	if ext == "" {
		return "not an image"
	}
	sum := sha256.Sum256(data)
	name := hex.EncodeToString(sum[:12]) + ext
	switch err := k.write(c, name, data); {
	case errors.Is(err, errDiskLow):
		return DiskLow
	case err != nil:
		k.logger().Warn("an image could not be kept", "err", err)
		return "not kept"
	}
	return "%[" + k.rel + "/" + name + "]"
}

var errDiskLow = errors.New("the disk is low")

func extOf(mime string) string {
	switch strings.TrimSpace(strings.Split(mime, ";")[0]) {
	case "image/jpeg":
		return ".jpg"
	case "image/png":
		return ".png"
	case "image/gif":
		return ".gif"
	case "image/webp":
		return ".webp"
	case "image/bmp":
		return ".bmp"
	}
	return ""
}

func (k *imageKeeper) write(c Chat, name string, data []byte) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if err := os.MkdirAll(k.dir, 0o700); err != nil {
		return err
	}
	if !k.ready {
		k.total = k.size()
		k.ready = true
	}
	path := filepath.Join(k.dir, name)
	if _, err := os.Stat(path); err == nil {
		now := time.Now()
		_ = os.Chtimes(path, now, now) // seen again: the newest
		k.account(c, name, int64(len(data)))
		if k.chatQuota > 0 {
			k.trimChat(c, name)
		}
		return nil
	}
	// Checked under the lock, so images fetched at once cannot each pass
	// the check and together go below the floor.
	if k.low(int64(len(data))) {
		return errDiskLow
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	k.total += int64(len(data))
	k.account(c, name, int64(len(data)))
	if k.chatQuota > 0 {
		k.trimChat(c, name)
	}
	if k.quota > 0 && k.total > k.quota {
		k.trim(path)
	}
	return nil
}

// account adds a kept file to chat c's images.
func (k *imageKeeper) account(c Chat, name string, size int64) {
	ci := k.chats[c]
	if ci == nil {
		ci = &chatImages{}
		k.chats[c] = ci
	}
	for _, f := range ci.files {
		if f.name == name {
			return
		}
	}
	ci.files = append(ci.files, keptFile{name, size})
	ci.total += size
	k.refs[name]++
}

// trimChat removes chat c's oldest images until its own fit chatQuota,
// never the one just kept; a file another chat also sent stays.
func (k *imageKeeper) trimChat(c Chat, keep string) {
	ci := k.chats[c]
	for ci != nil && ci.total > k.chatQuota && len(ci.files) > 0 {
		f := ci.files[0]
		if f.name == keep {
			if len(ci.files) == 1 {
				return
			}
			ci.files = append(ci.files[1:], f)
			continue
		}
		ci.files = ci.files[1:]
		ci.total -= f.size
		if k.refs[f.name]--; k.refs[f.name] > 0 {
			continue
		}
		delete(k.refs, f.name)
		if os.Remove(filepath.Join(k.dir, f.name)) == nil {
			k.total -= f.size
		}
	}
}

func (k *imageKeeper) size() int64 {
	var n int64
	entries, _ := os.ReadDir(k.dir)
	for _, e := range entries {
		if info, err := e.Info(); err == nil && !e.IsDir() {
			n += info.Size()
		}
	}
	return n
}

// trim removes the oldest images until the total fits the quota, never
// the one just kept.
func (k *imageKeeper) trim(keep string) {
	entries, _ := os.ReadDir(k.dir)
	type file struct {
		path string
		size int64
		mod  time.Time
	}
	var files []file
	for _, e := range entries {
		if info, err := e.Info(); err == nil && !e.IsDir() {
			files = append(files, file{filepath.Join(k.dir, e.Name()), info.Size(), info.ModTime()})
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].mod.Before(files[j].mod) })
	for _, f := range files {
		if k.total <= k.quota {
			break
		}
		if f.path == keep {
			continue
		}
		if os.Remove(f.path) == nil {
			k.total -= f.size
		}
	}
}
