package cmd

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/cyan-agent/cyan/internal/crash"
)

const benchCrashMore = `It runs this very binary as the daemon over one data dir, with a fake model
in this process, and two clients that send messages with idempotency keys
(sending a message again until it is acknowledged, as a careful client
does). Each cycle kills the daemon with SIGKILL — soon after it starts,
often before it has opened its store, or while it answers — and starts it
again. Every 25 cycles and at the end it checks that every acknowledged
message and its one reply are there exactly once and in order, that every
start opened, that recall, the workspace and the event log answer, and that
SIGTERM stops it cleanly. --fault disk-full runs it on a small tmpfs that
fills up and empties; --fault slow-disk on a loop device whose writes are
throttled (both need root on Linux). It exits 1 when it finds a problem;
--seed repeats a run.`

// benchCrash runs the crash and fault harness on this very binary.
func benchCrash(f *flags) run {
	cycles := f.Int("cycles", 50, "how many times to kill the daemon (kill -9) and start it again")
	clients := f.Int("clients", 2, "conversations at once")
	seed := f.Uint64("seed", 0, "seed of the kill moments, to repeat a run (0: a new one, printed)")
	fault := f.String("fault", "", "the fault `mode`: disk-full (a small disk that fills up) or slow-disk (throttled writes); both need root on Linux")
	dir := f.String("dir", "", "work `folder` (default: a new temporary one)")
	keep := f.Bool("keep", false, "keep the work folder (the data dir) afterwards")
	asJSON := f.json()
	return func(io IO, _ []string) error {
		if *cycles < 1 || *clients < 1 {
			return &usageError{msg: "--cycles and --clients must be at least 1"}
		}
		bin, err := os.Executable()
		if err != nil {
			return fmt.Errorf("find this binary: %w", err)
		}
		if *seed == 0 {
			*seed = uint64(time.Now().UnixNano())
		}
		fmt.Fprintf(io.Stderr, "crash harness: %d cycles, %d clients, fault %q, seed %d\n", *cycles, *clients, *fault, *seed)
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
		defer stop()
		rep, err := crash.Run(ctx, crash.Options{Binary: bin, Cycles: *cycles, Clients: *clients, Seed: *seed,
			Fault: *fault, Dir: *dir, Keep: *keep, Progress: io.Stderr})
		if err != nil {
			return err
		}
		if *asJSON {
			if err := printJSON(io.Stdout, map[string]any{"seed": *seed, "fault": *fault, "ok": rep.OK(), "report": rep}); err != nil {
				return err
			}
		} else {
			fmt.Fprint(io.Stdout, rep.String())
		}
		if !rep.OK() {
			return fmt.Errorf("the harness found problems (--seed %d repeats the run)", *seed)
		}
		return nil
	}
}
