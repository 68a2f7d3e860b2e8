package archive

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/clock"
	"github.com/cyan-agent/cyan/journal"
	"github.com/cyan-agent/cyan/store"
)

// Schedule makes backups of a running store on a cron schedule (local
// time) into a folder, and keeps the newest Keep of them. Each backup,
// made or failed, is posted on the store's journal (journal.BackupDone).
type Schedule struct {
	Store   *store.Store
	Spec    string // five cron fields
	Dir     string
	Keep    int
	Version string       // written into each backup's header
	Clock   clock.Clock  // nil: the wall clock
	Logger  *slog.Logger // nil: discard
}

// backupName is a scheduled backup's file name; names sort by time.
const backupName = "cyan-20060102-150405.backup"

// Run makes a backup at each time of the schedule until ctx ends. A
// backup that fails is logged, and the next one is tried at its time.
func (s *Schedule) Run(ctx context.Context) error {
	sched, err := clock.ParseCron(s.Spec)
	if err != nil {
		return fmt.Errorf("archive: backup schedule: %w", err)
	}
	clk := s.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	now := clk.Now
	log := s.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	for {
		next := sched.Next(now())
		select {
		case <-ctx.Done():
			return nil
		case <-clk.After(next.Sub(now())):
		}
		path, info, err := s.Once(now())
		done := journal.Backup{File: path, Bytes: info.Bytes}
		if err != nil {
			done = journal.Backup{Error: err.Error()}
		}
		s.Store.Journal().Post(journal.New(journal.BackupDone, "", done))
		if err != nil {
			log.Error("scheduled backup failed; the next one is tried at its time", "err", err, "next", sched.Next(now()))
			continue
		}
		log.Info("backup made", "file", path, "bytes", info.Bytes)
	}
}

// Once makes one backup now and removes the oldest beyond Keep.
func (s *Schedule) Once(now time.Time) (string, BackupInfo, error) {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return "", BackupInfo{}, fmt.Errorf("archive: backup folder %s: %w", s.Dir, err)
	}
	path := filepath.Join(s.Dir, now.Format(backupName))
	info, err := BackupFile(s.Store, path, s.Version, now)
	if err != nil {
		return "", info, err
	}
	return path, info, s.prune()
}

// prune removes the scheduled backups beyond the newest Keep.
func (s *Schedule) prune() error {
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		return err
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if strings.HasPrefix(n, "cyan-") && strings.HasSuffix(n, ".backup") && len(n) == len(backupName) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names[:max(0, len(names)-max(s.Keep, 1))] {
		if err := os.Remove(filepath.Join(s.Dir, n)); err != nil {
			return fmt.Errorf("archive: remove the old backup %s: %w", n, err)
		}
	}
	return nil
}
