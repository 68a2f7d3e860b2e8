package cmd

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/tools"
)

// checkSandbox says which protection confines the terminal and extra
// tools, as the daemon would build it.
func checkSandbox(cfg *config.Config) check {
	c := check{name: "sandbox"}
	var roots []string
	for _, r := range cfg.Tools.Roots {
		real, err := filepath.EvalSymlinks(r)
		if err != nil {
			c.msg = fmt.Sprintf("tools.roots: %s does not exist", r)
			c.fix = "create the folder, or remove it from tools.roots"
			return c
		}
		roots = append(roots, real)
	}
	home, _ := os.UserHomeDir()
	term := cfg.Tools.Terminal
	secrets, err := tools.NewSecrets(cfg.Tools.Secrets)
	if err != nil {
		c.msg, c.fix = err.Error(), "fix the entry in tools.secrets"
		return c
	}
	j := tools.NewJail(tools.JailOptions{Mode: term.Sandbox, Roots: roots, DataDir: cfg.DataDir, Home: home, Secrets: secrets,
		Limits: tools.Limits{MemoryMB: term.MaxMemoryMB, Processes: term.MaxProcesses, CPUSeconds: term.MaxCPUSeconds,
			DiskMB: term.MaxDiskMB, TmpMB: term.MaxTmpMB}})
	switch {
	case j.Err() != nil:
		c.ok, c.warn = true, true
		c.msg = "the terminal and extra tools will not run: " + j.Err().Error()
		c.fix = "install bubblewrap (apt install bubblewrap), or accept unconfined commands with tools.terminal.sandbox: off"
	case j.Off():
		c.ok, c.warn = true, true
		c.msg = j.String() + "; a command can read anything this user can"
		c.fix = "install bubblewrap and remove tools.terminal.sandbox: off"
	default:
		c.ok = true
		c.msg = j.String()
	}
	return c
}

// checkFiles says whether the file and terminal tools are offered: only
// with folders in tools.roots.
func checkFiles(cfg *config.Config) check {
	if len(cfg.Tools.Roots) == 0 {
		return check{name: "files", ok: true, warn: true,
			msg: "no folder is open to the companion: read_file, write_file, terminal and system_operation are not offered",
			fix: "to let it work with files, set tools.roots: [/path/to/a/folder] in the config (the first is the terminal's working folder)"}
	}
	return check{name: "files", ok: true, msg: "the file and terminal tools work in " + strings.Join(cfg.Tools.Roots, ", ")}
}

// checkUser warns when cyan runs as root: a mistake in a rule, a tool or
// the sandbox would then cost the whole machine.
func checkUser() check {
	c := check{name: "user", ok: true}
	name := fmt.Sprint(os.Geteuid())
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	if os.Geteuid() == 0 {
		c.warn = true
		c.msg = "cyan runs as root: whatever it is allowed to do, it does as root"
		c.fix = "run cyan as your own user (the sandbox also holds for root, but nothing else would)"
		return c
	}
	c.msg = "runs as " + name + ", not root"
	return c
}
