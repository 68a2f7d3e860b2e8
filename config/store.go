package config

import (
	"path/filepath"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/clock"
)

// MinFreeFloorMB is the least store.min_free_mb accepted: what the
// database may write at once through its memory maps (a new write-ahead
// log, a table flush, the compactions that may run together), where a
// disk that runs out kills the process (SIGBUS) instead of failing the
// write. The store derives it from its database's options, and a test
// holds the two equal (store.MinFreeFloor).
const MinFreeFloorMB = 250

// Store tunes the database's safety margin.
type Store struct {
	// MinFreeMB is the free space, in megabytes, the store keeps on the
	// disk of the data dir: a write that would leave less is refused with
	// a clear error (the API answers 507) until space is freed.
	MinFreeMB int `yaml:"min_free_mb"`
	// MemoryMB is what the database may hold in memory, in megabytes: its
	// memtables, block cache and index cache (64 fits a 1 GB VPS; more
	// makes reads of a large history and bursts of writes faster). The Go
	// runtime's soft memory limit follows it (store.GoMemoryLimit).
	MemoryMB int `yaml:"memory_mb"`
}

// Backup schedules backups of the running daemon.
type Backup struct {
	// Schedule is a cron spec (5 fields, local time); empty: no scheduled
	// backups (cyan backup FILE still works).
	Schedule string `yaml:"schedule"`
	// Dir is where scheduled backups are written; empty: <data dir>/backups.
	Dir string `yaml:"dir"`
	// Keep is how many scheduled backups are kept; older ones are removed.
	Keep int `yaml:"keep"`
}

// DefaultShutdownTimeout bounds a shutdown unless shutdown_timeout says
// otherwise.
const DefaultShutdownTimeout = 10 * time.Second

// BackupDir is the folder of scheduled backups.
func (c *Config) BackupDir() string {
	if c.Backup.Dir != "" {
		return c.Backup.Dir
	}
	return filepath.Join(c.DataDir, "backups")
}

// validateStore checks shutdown_timeout, store and backup.
func (c *Config) validateStore(bad func(key, format string, args ...any)) {
	if d := time.Duration(c.ShutdownTimeout); d < time.Second || d > 10*time.Minute {
		bad("shutdown_timeout", "%s is out of range 1s–10m", d)
	}
	switch m := c.Store.MinFreeMB; {
	case m < MinFreeFloorMB:
		bad("store.min_free_mb", "%d is below the floor of %d: the database may write up to %d MB at once (a new 16 MB write-ahead log, an 8 MB table flush, compactions of up to %d MB) through memory maps, and a disk that runs out in the middle of that kills cyan (SIGBUS) instead of refusing the write; set %d or more (256 is the default)",
			m, MinFreeFloorMB, MinFreeFloorMB, MinFreeFloorMB-24, MinFreeFloorMB)
	case m > 1<<20:
		bad("store.min_free_mb", "%d is out of range %d–1048576 (megabytes kept free on the data dir's disk; 256 is the default)", m, MinFreeFloorMB)
	}
	if c.Store.MemoryMB < 24 || c.Store.MemoryMB > 1<<16 {
		bad("store.memory_mb", "%d is out of range 24–65536 (megabytes the database may hold in memory; 64 is the default)", c.Store.MemoryMB)
	}
	b := c.Backup
	if strings.TrimSpace(b.Schedule) != "" {
		if _, err := clock.ParseCron(b.Schedule); err != nil {
			bad("backup.schedule", "%v", err)
		}
	}
	if b.Dir != "" && !filepath.IsAbs(b.Dir) {
		bad("backup.dir", "%q is not a full path; name the folder for backups by its absolute path", b.Dir)
	}
	if b.Keep < 1 || b.Keep > 10000 {
		bad("backup.keep", "%d is out of range 1–10000", b.Keep)
	}
}
