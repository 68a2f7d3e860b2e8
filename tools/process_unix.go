//go:build unix

package tools

import (
	"os/exec"
	"syscall"
)

func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills every process of the group pgid.
func killGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }

// GroupAlive reports whether any process of the group is still running.
func GroupAlive(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }
