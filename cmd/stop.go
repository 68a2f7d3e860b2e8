package cmd

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/cyan-agent/cyan/store"
)

// stopCmd asks the daemon of the data dir to stop (SIGTERM to the pid in
// its lock file) and waits until it has released the data dir.
func stopCmd(f *flags) run {
	wait := f.Duration("wait", 0, "how long to wait for it to stop (default: shutdown_timeout + 5s)")
	return func(io IO, _ []string) error {
		return stop(io, *wait)
	}
}

func stop(io IO, wait time.Duration) error {
	cfg, err := loadConfig(io)
	if err != nil {
		return err
	}
	limit := wait
	if limit <= 0 {
		limit = time.Duration(cfg.ShutdownTimeout) + 5*time.Second
	}
	pid, held, err := store.Holder(cfg.DataDir)
	if err != nil {
		return fmt.Errorf("read the lock of %s: %w", cfg.DataDir, err)
	}
	if !held {
		fmt.Fprintf(io.Stdout, "no cyan daemon is running on %s\n", cfg.DataDir)
		return nil
	}
	if pid <= 0 {
		return fmt.Errorf("a daemon holds %s, but its lock file names no pid; stop it where it runs", cfg.DataDir)
	}
	proc, err := os.FindProcess(pid)
	if err == nil {
		err = proc.Signal(syscall.SIGTERM)
	}
	if err != nil {
		if errors.Is(err, os.ErrProcessDone) {
			return nil
		}
		return fmt.Errorf("signal cyan (pid %d): %w (is it another user's? stop it as that user)", pid, err)
	}
	began := time.Now()
	for time.Since(began) < limit {
		if _, held, err := store.Holder(cfg.DataDir); err == nil && !held {
			fmt.Fprintf(io.Stdout, "stopped cyan (pid %d) in %s\n", pid, time.Since(began).Round(10*time.Millisecond))
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("cyan (pid %d) is still running %s after SIGTERM; its log says what it waits for. kill -9 %d stops it at once (what it acknowledged is on disk)", pid, limit, pid)
}
