package bridge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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

// imageKeeper keeps a bridge's incoming images in the data dir, each at
// most max bytes, all together at most quota bytes (the oldest go first).
type imageKeeper struct {
	dir   string // <data dir>/images/<bridge>
	rel   string // images/<bridge>
	max   int64
	quota int64

	log *slog.Logger

	mu    sync.Mutex
	total int64
	ready bool
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
	return &imageKeeper{dir: filepath.Join(dataDir, ImagesDir, bridge), rel: ImagesDir + "/" + bridge, max: max, quota: quota}
}

// keep downloads the image and returns its "%[…]" reference, or a short
// reason it was not kept.
func (k *imageKeeper) keep(ctx context.Context, m *Media) string {
	if k == nil || m == nil || m.Fetch == nil {
		return "not downloadable"
	}
	if m.Size > k.max && k.max > 0 {
		return fmt.Sprintf("%d bytes, over the %d-byte limit", m.Size, k.max)
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
	if err := k.write(name, data); err != nil {
		k.logger().Warn("an image could not be kept", "err", err)
		return "not kept"
	}
	return "%[" + k.rel + "/" + name + "]"
}

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

func (k *imageKeeper) write(name string, data []byte) error {
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
		return nil
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	k.total += int64(len(data))
	if k.quota > 0 && k.total > k.quota {
		k.trim(path)
	}
	return nil
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
