package tools

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
)

// memCap is a memory cgroup that holds one sandboxed run: every page the
// run's processes use is charged to it — their heap, but also the pages
// of a shared mapping (MAP_SHARED anonymous, memfd, System V shm) and of
// the tmpfs of /tmp and /dev/shm, which RLIMIT_DATA does not see — and at
// its limit the kernel reclaims, then kills inside it (the OOM killer
// reports a kill in the cgroup's counters, which the run reads to say why
// it stopped). Swap is closed to it where the kernel allows.
//
// It is made as a child of this process's own memory cgroup, so whatever
// limits the daemon lives under still hold: cgroup v1's memory hierarchy,
// or v2 where the memory controller is enabled for our cgroup's children.
// Where neither can be made (a user without delegation), the sandbox's
// poll counts the run's resident and shared memory instead (Sandbox.Run).
type memCap struct {
	dir string
	v2  bool
}

var memCapSeq atomic.Uint64

// newMemCap makes a cgroup that lets the run use limit bytes, or nil when
// none can be made here.
func newMemCap(limit int64) *memCap {
	name := fmt.Sprintf("cyan-sandbox-%d-%d", os.Getpid(), memCapSeq.Add(1))
	n := []byte(strconv.FormatInt(limit, 10))
	for _, parent := range memParents() {
		dir := filepath.Join(parent.dir, name)
		if os.Mkdir(dir, 0o755) != nil {
			continue
		}
		c := &memCap{dir: dir, v2: parent.v2}
		var err error
		if c.v2 {
			err = os.WriteFile(filepath.Join(dir, "memory.max"), n, 0o644)
			_ = os.WriteFile(filepath.Join(dir, "memory.swap.max"), []byte("0"), 0o644)
		} else {
			err = os.WriteFile(filepath.Join(dir, "memory.limit_in_bytes"), n, 0o644)
			_ = os.WriteFile(filepath.Join(dir, "memory.memsw.limit_in_bytes"), n, 0o644) // swap accounting may be off
			_ = os.WriteFile(filepath.Join(dir, "memory.swappiness"), []byte("0"), 0o644)
		}
		if err != nil {
			_ = os.Remove(dir)
			continue
		}
		return c
	}
	return nil
}

type memParent struct {
	dir string
	v2  bool
}

// memParents lists where a memory cgroup may be made: our own cgroup in
// v1's memory hierarchy, then our own v2 cgroup when its children get the
// memory controller (one mounted as cgroup2, told by cgroup.controllers).
func memParents() []memParent {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil
	}
	var out []memParent
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		rel := filepath.Clean("/" + f[2])
		switch {
		case f[0] != "0" && (f[1] == "memory" || strings.Contains(","+f[1]+",", ",memory,")):
			dir := filepath.Join("/sys/fs/cgroup/memory", rel)
			if _, err := os.Stat(filepath.Join(dir, "memory.limit_in_bytes")); err == nil {
				out = append(out, memParent{dir: dir})
			}
		case f[0] == "0" && f[1] == "":
			for _, mnt := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
				dir := filepath.Join(mnt, rel)
				sub, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
				if err != nil {
					continue
				}
				if !bytes.Contains(sub, []byte("memory")) {
					// Our children get it only if we may hand it down; a
					// cgroup with processes of its own (not the root) may not.
					_ = os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+memory"), 0o644)
					sub, _ = os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
				}
				if bytes.Contains(sub, []byte("memory")) {
					out = append(out, memParent{dir: dir, v2: true})
				}
			}
		}
	}
	return out
}

// procs is the file a process writes its pid to, to join the cgroup.
func (c *memCap) procs() string { return filepath.Join(c.dir, "cgroup.procs") }

// oomKills is how many processes the kernel killed in the cgroup at its
// limit.
func (c *memCap) oomKills() int {
	file := "memory.oom_control"
	if c.v2 {
		file = "memory.events"
	}
	f, err := os.Open(filepath.Join(c.dir, file))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), " "); ok && k == "oom_kill" {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// remove deletes the cgroup once its processes are gone; v1 moves the
// pages still charged (a tmpfs that outlived them) to the parent.
func (c *memCap) remove() error { return removeCgroup(c.dir) }
