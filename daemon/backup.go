package daemon

import (
	"github.com/cyan-agent/cyan/archive"
	"github.com/cyan-agent/cyan/clock"
	"github.com/cyan-agent/cyan/supervise"
)

// backups is the scheduled-backup part (config backup.schedule), or nil
// when no schedule is set.
func (d *Daemon) backups(version string, clk clock.Clock) *supervise.Part {
	if d.cfg.Backup.Schedule == "" {
		return nil
	}
	s := &archive.Schedule{Store: d.store, Spec: d.cfg.Backup.Schedule, Dir: d.cfg.BackupDir(), Keep: d.cfg.Backup.Keep,
		Version: version, Clock: clk, Logger: d.root.With("component", "backup")}
	return &supervise.Part{Name: "backup", Run: s.Run}
}
