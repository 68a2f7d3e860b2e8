package config

import (
	"strings"
	"testing"
	"time"
)

func TestStoreAndBackupSections(t *testing.T) {
	dir := t.TempDir()
	c, err := Load(envOf(map[string]string{EnvDataDir: dir}))
	if err != nil {
		t.Fatal(err)
	}
	if time.Duration(c.ShutdownTimeout) != 10*time.Second || c.Store.MinFreeMB != 256 || c.Store.MemoryMB != 64 || c.Backup.Keep != 7 || c.Backup.Schedule != "" {
		t.Fatalf("defaults: %v %+v %+v", c.ShutdownTimeout, c.Store, c.Backup)
	}
	if c.BackupDir() != dir+"/backups" {
		t.Fatalf("BackupDir = %q", c.BackupDir())
	}
	c, err = Load(envOf(map[string]string{EnvDataDir: dir, EnvConfig: "testdata/store.good.yml"}))
	if err != nil {
		t.Fatal(err)
	}
	if time.Duration(c.ShutdownTimeout) != 20*time.Second || c.Store.MinFreeMB != 300 || c.Store.MemoryMB != 256 || c.Backup.Keep != 14 ||
		c.Backup.Schedule != "30 3 * * *" || c.BackupDir() != "/var/backups/cyan" {
		t.Fatalf("from the file: %v %+v %+v", c.ShutdownTimeout, c.Store, c.Backup)
	}
	_, err = Load(envOf(map[string]string{EnvDataDir: dir, EnvConfig: "testdata/store.bad.yml"}))
	if err == nil {
		t.Fatal("store.bad.yml loaded")
	}
	for _, want := range []string{
		"store.bad.yml:1: shutdown_timeout: 0s is out of range",
		"store.bad.yml:3: store.min_free_mb: 0 is below the floor of 250",
		"store.bad.yml:4: store.memory_mb: 8 is out of range",
		"store.bad.yml:6: backup.schedule: \"every night\" is not a cron spec",
		"store.bad.yml:7: backup.dir: \"backups\" is not a full path",
		"store.bad.yml:8: backup.keep: 0 is out of range",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
}
