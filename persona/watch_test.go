package persona

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

type change struct {
	p   *Persona
	err error
}

func TestWatch(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, FileName), "---\nname: A\n---\nI am ${agent_name}.\n")

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	changes := make(chan change, 16)
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- watch(ctx, dir, func(p *Persona, err error) { changes <- change{p, err} },
			10*time.Millisecond, func() { close(ready) })
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("watch ended: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("watch did not start")
	}

	// wait returns the first change that ok accepts; editors may cause
	// intermediate reloads, which are skipped.
	wait := func(what string, ok func(change) bool) change {
		t.Helper()
		timeout := time.After(10 * time.Second)
		for {
			select {
			case c := <-changes:
				if ok(c) {
					return c
				}
			case <-timeout:
				t.Fatalf("no change with %s", what)
			}
		}
	}

	write(t, filepath.Join(dir, "sub", "x.md"), "one")
	write(t, filepath.Join(dir, FileName), "---\nname: B\n---\nI am ${agent_name}, ${file_load(sub/x.md)}.\n")
	c := wait("name B", func(c change) bool { return c.err == nil && c.p.Name == "B" })
	if got, err := c.p.Own(nil); err != nil || got != "I am B, one.\n" {
		t.Errorf("Render: %q, %v", got, err)
	}

	// A folder created after the watch began is watched too: the reload
	// above came after its creation was seen.
	write(t, filepath.Join(dir, "sub", "x.md"), "two")
	wait("sub/x.md changed", func(c change) bool {
		got, err := c.p.Own(nil)
		return err == nil && got == "I am B, two.\n"
	})

	write(t, filepath.Join(dir, FileName), "---\nnmae: C\n---\n")
	c = wait("an error", func(c change) bool { return c.err != nil })
	var e *Error
	if !errors.As(c.err, &e) || e.Line != 2 || c.p != nil {
		t.Errorf("got %v, %v; want an *Error on line 2 and no persona", c.p, c.err)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("watch returned %v after cancel, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("watch did not return after cancel")
	}
}

func TestWatchMissingFolder(t *testing.T) {
	err := Watch(t.Context(), filepath.Join(t.TempDir(), "nope"), func(*Persona, error) {})
	if err == nil {
		t.Fatal("no error for a missing folder")
	}
}
