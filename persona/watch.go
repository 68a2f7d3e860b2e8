package persona

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// watchDelay is how long a folder must stay quiet before it is reloaded, so
// that an editor's burst of writes gives one reload.
const watchDelay = 200 * time.Millisecond

// Watch watches the persona folder dir and its sub-folders and, once edits
// have settled, reloads the persona and calls onChange with it or with the
// load error. It does not load at start: call Load first. It blocks until ctx
// ends and then returns nil; it returns an error only when the watch cannot
// start. onChange runs on Watch's goroutine, one call at a time.
func Watch(ctx context.Context, dir string, onChange func(*Persona, error)) error {
	return watch(ctx, dir, onChange, watchDelay, nil)
}

// watch is Watch with its delay, and a ready hook called once the folder is
// watched (for tests).
func watch(ctx context.Context, dir string, onChange func(*Persona, error), delay time.Duration, ready func()) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("persona: watch %s: %w", dir, err)
	}
	defer w.Close()
	if err := addTree(w, dir); err != nil {
		return fmt.Errorf("persona: watch %s: %w", dir, err)
	}
	if ready != nil {
		ready()
	}

	settle := time.NewTimer(delay)
	settle.Stop()
	defer settle.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if ev.Op == fsnotify.Chmod {
				continue
			}
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() {
					_ = addTree(w, ev.Name) // best effort: a new sub-folder
				}
			}
			settle.Reset(delay)
		case _, ok := <-w.Errors:
			if !ok {
				return nil
			}
			settle.Reset(delay) // events may have been lost: reload to be safe
		case <-settle.C:
			onChange(Load(dir))
		}
	}
}

// addTree watches dir and the folders under it, skipping hidden ones.
func addTree(w *fsnotify.Watcher, dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return nil
		}
		if !d.IsDir() {
			return nil
		}
		if p != dir && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		return w.Add(p)
	})
}
