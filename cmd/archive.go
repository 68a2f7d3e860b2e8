package cmd

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/cyan-agent/cyan/archive"
	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/store"
)

// backupCmd saves a backup of the running daemon's database (POST
// /api/v1/backup); with no daemon running, it reads the data dir itself.
func backupCmd(f *flags) run {
	return func(io IO, pos []string) error {
		cfg, err := loadConfig(io)
		if err != nil {
			return err
		}
		path := pos[0]
		began := time.Now()
		var size int64
		if _, held, _ := store.Holder(cfg.DataDir); held {
			size, err = download(cfg, "/api/v1/backup", path)
		} else {
			err = offline(cfg, func(st *store.Store) error {
				info, err := archive.BackupFile(st, path, Version, time.Now())
				size = info.Bytes
				return err
			})
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(io.Stdout, "backed up %s to %s (%s) in %s; cyan restore %s brings it back into an empty data dir\n",
			cfg.DataDir, path, sizeOf(size), time.Since(began).Round(time.Millisecond), path)
		return nil
	}
}

// restoreCmd loads a backup into the data dir, which must hold no database.
func restoreCmd(f *flags) run {
	return func(io IO, pos []string) error {
		cfg, err := loadConfig(io)
		if err != nil {
			return err
		}
		if _, held, _ := store.Holder(cfg.DataDir); held {
			return fmt.Errorf("a daemon runs on %s; a backup is restored into an empty data dir, not a running one (set CYAN_DATA_DIR to a new folder)", cfg.DataDir)
		}
		file, err := os.Open(pos[0])
		if err != nil {
			return badInput("%w (check the path)", err)
		}
		defer file.Close()
		h, err := archive.Restore(cfg.DataDir, bufio.NewReaderSize(file, 1<<20), nil)
		if err != nil {
			return err
		}
		fmt.Fprintf(io.Stdout, "restored the backup of %s (cyan %s) into %s; start it with cyan serve\n", h.Created.Local().Format("2006-01-02 15:04:05"), h.Cyan, cfg.DataDir)
		return nil
	}
}

// exportCmd writes everything cyan remembers as JSON lines: through the
// running daemon (POST /api/v1/export), or from the data dir when none runs.
func exportCmd(f *flags) run {
	format := f.String("format", "jsonl", "the `format`: jsonl, the only one (docs/operations.md documents it)")
	return func(io IO, pos []string) error {
		if *format != "jsonl" {
			return &usageError{msg: fmt.Sprintf("--format %q is not jsonl", *format)}
		}
		cfg, err := loadConfig(io)
		if err != nil {
			return err
		}
		path := pos[0]
		if _, held, _ := store.Holder(cfg.DataDir); held {
			if path == "-" {
				return stream(cfg, "/api/v1/export?format=jsonl", io.Stdout)
			}
			if _, err := download(cfg, "/api/v1/export?format=jsonl", path); err != nil {
				return err
			}
			fmt.Fprintf(io.Stderr, "exported %s to %s\n", cfg.DataDir, path)
			return nil
		}
		return offline(cfg, func(st *store.Store) error {
			w, done := io.Stdout, func() error { return nil }
			if path != "-" {
				file, err := os.Create(path)
				if err != nil {
					return err
				}
				w, done = file, func() error {
					if err := file.Sync(); err != nil {
						file.Close()
						return err
					}
					return file.Close()
				}
			}
			info, err := archive.Export(st, w, Version, time.Now())
			if err == nil {
				err = done()
			}
			if err == nil {
				fmt.Fprintf(io.Stderr, "exported %d channels, %d messages and %d records\n", info.Channels, info.Messages, info.Records)
			}
			return err
		})
	}
}

// isExport reports whether a file opens with a cyan export's header.
func isExport(br *bufio.Reader) bool {
	b, _ := br.Peek(256)
	for i, c := range b {
		if c == '\n' {
			return archive.IsExport(b[:i])
		}
	}
	return false
}

// importExport takes an export back into the data dir. It writes into the
// store itself, so the daemon must be stopped.
func importExport(io IO, cfg *config.Config, r io.Reader, asJSON bool) error {
	if pid, held, _ := store.Holder(cfg.DataDir); held {
		return fmt.Errorf("a daemon (pid %d) runs on %s; an export is imported into the store itself: stop it first (cyan stop), import, then start it again", pid, cfg.DataDir)
	}
	began := time.Now()
	return offline(cfg, func(st *store.Store) error {
		info, err := archive.Import(st, r)
		if err != nil {
			return err
		}
		if asJSON {
			return printJSON(io.Stdout, map[string]any{"format": "cyan", "channels": info.Channels, "messages": info.Messages,
				"compressed": info.Compressed, "records": info.Records, "kept": info.Kept, "millis": time.Since(began).Milliseconds()})
		}
		fmt.Fprintf(io.Stdout, "imported %d channels, %d messages, %d compressed forms and %d records (%d were already there) in %s\n",
			info.Channels, info.Messages, info.Compressed, info.Records, info.Kept, time.Since(began).Round(time.Millisecond))
		return nil
	})
}

// offline opens the data dir's store for fn while no daemon runs, with
// the configured memory budget and the Go memory limit that goes with it
// (as the daemon has: an export's import is as big as a history).
func offline(cfg *config.Config, fn func(*store.Store) error) error {
	store.LimitGoMemory(cfg.Store.MemoryMB)
	st, err := store.Open(store.Options{Dir: cfg.DataDir, MinFree: uint64(cfg.Store.MinFreeMB) << 20, MemoryMB: cfg.Store.MemoryMB})
	if errors.Is(err, store.ErrLocked) {
		return fmt.Errorf("%w (a daemon started meanwhile: run the command again)", err)
	}
	if err != nil {
		return err
	}
	err = fn(st)
	return errors.Join(err, st.Close())
}

// download saves a daemon's answer to path, through a temporary file
// renamed into place once whole.
func download(cfg *config.Config, route, path string) (int64, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name())
	err = stream(cfg, route, tmp)
	if err == nil {
		err = tmp.Sync()
	}
	st, _ := tmp.Stat()
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

func stream(cfg *config.Config, route string, w io.Writer) error {
	resp, err := newClient(cfg).send("POST", route, nil, "*/*")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(w, resp.Body); err != nil {
		return fmt.Errorf("the daemon's answer was cut short (%v); nothing was saved", err)
	}
	return nil
}

func sizeOf(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
