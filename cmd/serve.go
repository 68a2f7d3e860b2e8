package cmd

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os/signal"
	"syscall"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/daemon"
	"github.com/cyan-agent/cyan/store"
)

func serveCmd(f *flags) run {
	return func(io IO, _ []string) error {
		cfg, err := loadConfig(io)
		if err != nil {
			return err
		}
		log := newLogger(io.Stderr, cfg.Log)
		// The collector keeps the heap under the limit that goes with the
		// store's memory budget (a bulk import's garbage is returned, not
		// kept); GOMEMLIMIT overrides it.
		log.Debug("go memory limit", "bytes", store.LimitGoMemory(cfg.Store.MemoryMB))
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
		defer stop()
		v := version()
		d, err := daemon.New(daemon.Options{
			Config: cfg, Logger: log, Version: v.Version,
			Ready: func(addr net.Addr) {
				fmt.Fprintf(io.Stderr, "cyan %s is listening on http://%s (data in %s; LLM %s %s at %s)\n",
					v.short(), addr, cfg.DataDir, cfg.LLM.Provider, cfg.LLM.Model, cfg.LLM.BaseURL)
			},
		})
		if err != nil {
			return err
		}
		return d.Run(ctx)
	}
}

func newLogger(w io.Writer, c config.Log) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(c.Level))
	opts := &slog.HandlerOptions{Level: level}
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
