package daemon

import (
	"time"

	"github.com/cyan-agent/cyan/archive"
	"github.com/cyan-agent/cyan/supervise"
)

// backups is the scheduled-backup part (config backup.schedule), or nil
// when no schedule is set.
func (d *Daemon) backups(version string, now func() time.Time) *supervise.Part {
	if d.cfg.Backup.Schedule == "" {
		return nil
	}
	s := &archive.Schedule{Store: d.store, Spec: d.cfg.Backup.Schedule, Dir: d.cfg.BackupDir(), Keep: d.cfg.Backup.Keep,
		Version: version, Now: now, Logger: d.root.With("component", "backup"), OnBackup: d.metrics.Backup}
	return &supervise.Part{Name: "backup", Run: s.Run}
}
