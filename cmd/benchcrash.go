package cmd

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/cyan-agent/cyan/internal/crash"
)

// benchCrash runs the crash and fault harness on this very binary.
func benchCrash(io IO, args []string) error {
	fs := newFlags(io, "bench")
	cycles := fs.Int("cycles", 50, "how many times to kill the daemon (kill -9) and start it again")
	clients := fs.Int("clients", 2, "conversations at once")
	seed := fs.Uint64("seed", 0, "seed of the kill moments, to repeat a run (0: a new one, printed)")
	fault := fs.String("fault", "", "`mode`: disk-full (a small disk that fills up) or slow-disk (throttled writes); both need root on Linux")
	dir := fs.String("dir", "", "work `folder` (default: a new temporary one)")
	keep := fs.Bool("keep", false, "keep the work folder (the data dir and logs) afterwards")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if *cycles < 1 {
		return &usageError{msg: "--cycles must be at least 1"}
	}
	bin, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find this binary: %w", err)
	}
	if *seed == 0 {
		*seed = uint64(os.Getpid())<<32 ^ uint64(os.Getppid())
	}
	fmt.Fprintf(io.Stderr, "crash harness: %d cycles, %d clients, fault %q, seed %d\n", *cycles, *clients, *fault, *seed)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	rep, err := crash.Run(ctx, crash.Options{Binary: bin, Cycles: *cycles, Clients: *clients, Seed: *seed,
		Fault: *fault, Dir: *dir, Keep: *keep, Progress: io.Stderr})
	if rep != nil {
		fmt.Fprint(io.Stdout, rep.String())
	}
	if err != nil {
		return err
	}
	if !rep.OK() {
		return fmt.Errorf("the harness found problems (seed %d repeats the run)", *seed)
	}
	return nil
}
