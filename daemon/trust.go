package daemon

import (
	"context"
	"time"

	"github.com/cyan-agent/cyan/archive"
)

// backups is the scheduled-backup part (config backup.schedule), or nil
// when no schedule is set.
func (d *Daemon) backups(version string, now func() time.Time) *actor {
	if d.cfg.Backup.Schedule == "" {
		return nil
	}
	s := &archive.Schedule{Store: d.store, Spec: d.cfg.Backup.Schedule, Dir: d.cfg.BackupDir(), Keep: d.cfg.Backup.Keep,
		Version: version, Now: now, Logger: d.root.With("component", "backup"), OnBackup: d.metrics.Backup}
	return &actor{name: "backup", run: func(ctx context.Context) error { return s.Run(ctx) }}
}
