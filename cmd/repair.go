package cmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/store"
)

// repairCmd salvages what the data dir's damaged database still holds
// into a new data dir and says what was lost; the damaged one is only
// read.
func repairCmd(f *flags) run {
	return func(io IO, pos []string) error {
		cfg, err := loadConfig(io)
		if err != nil {
			return err
		}
		if pid, held, _ := store.Holder(cfg.DataDir); held {
			return fmt.Errorf("a daemon (pid %d) runs on %s, so its database opened; stop it first (cyan stop) if you still want to copy it", pid, cfg.DataDir)
		}
		to, err := filepath.Abs(pos[0])
		if err != nil {
			return badInput("%w", err)
		}
		began := time.Now()
		rep, err := store.Salvage(cfg.DataDir, to, nil)
		if err != nil {
			return err
		}
		copied, err := copyDataDirFiles(cfg, to)
		if err != nil {
			return err
		}
		w := io.Stdout
		fmt.Fprintf(w, "salvaged the database of %s into %s in %s; the damaged data dir was not changed\n", cfg.DataDir, to, time.Since(began).Round(time.Millisecond))
		switch lost := rep.Lost(); {
		case rep.Recorded == 0:
			fmt.Fprintf(w, "  messages: %d kept, %d known lost (the damaged data dir has no record of how many it held)\n", rep.Messages, lost)
		case lost == 0:
			fmt.Fprintf(w, "  messages: %d kept of %d recorded: none lost\n", rep.Messages, rep.Recorded)
		default:
			fmt.Fprintf(w, "  messages: %d kept of %d recorded: at least %d LOST\n", rep.Messages, rep.Recorded, lost)
		}
		fmt.Fprintf(w, "  keys copied: %d (messages and their indexes, memory, events, recall, …)\n", rep.Keys)
		if rep.LostValues > 0 {
			fmt.Fprintf(w, "  values that did not read: %d (%d of them messages)\n", rep.LostValues, rep.LostMessages)
		}
		if rep.Dropped > 0 {
			fmt.Fprintf(w, "  index entries of lost messages left out: %d\n", rep.Dropped)
		}
		if rep.Reindexed > 0 {
			fmt.Fprintf(w, "  index entries written anew for kept messages: %d\n", rep.Reindexed)
		}
		for _, u := range rep.Unreadable {
			fmt.Fprintf(w, "  left out: %s\n", u)
		}
		if len(copied) > 0 {
			fmt.Fprintf(w, "  copied beside the database: %v\n", copied)
		}
		fmt.Fprintf(w, "start cyan on it with CYAN_DATA_DIR=%s cyan serve; once you have checked it, it can take the old data dir's place\n", to)
		return nil
	}
}

// copyDataDirFiles copies the data dir's own files (the configuration,
// the API token) beside the salvaged database; folders (backups,
// personas) stay where they are.
func copyDataDirFiles(cfg *config.Config, to string) ([]string, error) {
	entries, err := os.ReadDir(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	skip := map[string]bool{store.LockFile: true, store.StateFile: true, store.StateFile + ".tmp": true, store.ReserveFile: true}
	var copied []string
	for _, e := range entries {
		if !e.Type().IsRegular() || skip[e.Name()] {
			continue
		}
		dst := filepath.Join(to, e.Name())
		if _, err := os.Lstat(dst); err == nil {
			continue
		} else if !errors.Is(err, os.ErrNotExist) {
			return copied, err
		}
		b, err := os.ReadFile(filepath.Join(cfg.DataDir, e.Name()))
		if err != nil {
			return copied, err
		}
		info, _ := e.Info()
		if err := os.WriteFile(dst, b, info.Mode().Perm()); err != nil {
			return copied, err
		}
		copied = append(copied, e.Name())
	}
	return copied, nil
}
