package cmd

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/store"
)

const serviceMore = `On Linux it writes a systemd user unit, ~/.config/systemd/user/cyan.service,
that runs "cyan serve" with the environment cyan runs with now (the CYAN_
variables, the data dir and config file made absolute), restarts it when it
fails, and gives it shutdown_timeout to stop; then it runs systemctl --user
daemon-reload and enable --now. To start it at boot before you log in:
loginctl enable-linger $USER. On macOS it writes a launchd agent,
~/Library/LaunchAgents/cyan.plist, started at login and again when it
fails, and bootstraps it. --no-start writes the file and prints the commands
instead. The unit holds your environment (an API key among it), so it is
readable by you alone.`

// serviceSpec is what a service runs.
type serviceSpec struct {
	Binary  string
	Env     [][2]string // sorted by name
	DataDir string
	Stop    time.Duration // how long the manager waits after SIGTERM
}

// specOf builds the spec from the running environment.
func specOf(io IO, cfg *config.Config, bin string) (serviceSpec, error) {
	if bin == "" {
		b, err := os.Executable()
		if err != nil {
			return serviceSpec{}, fmt.Errorf("find this binary: %w", err)
		}
		bin = b
	}
	bin, err := filepath.Abs(bin)
	if err != nil {
		return serviceSpec{}, err
	}
	if r, err := filepath.EvalSymlinks(bin); err == nil {
		bin = r
	}
	if strings.Contains(bin, string(filepath.Separator)+"go-build") {
		return serviceSpec{}, badInput("this cyan was built by go run into a temporary folder (%s); build one that stays (go build -o ~/bin/cyan ./cmd/cyan) and run its service install", bin)
	}
	s := serviceSpec{Binary: bin, DataDir: cfg.DataDir, Stop: time.Duration(cfg.ShutdownTimeout) + 5*time.Second}
	seen := map[string]bool{}
	add := func(k, v string) {
		if v != "" && !seen[k] {
			seen[k] = true
			s.Env = append(s.Env, [2]string{k, v})
		}
	}
	add(config.EnvDataDir, cfg.DataDir)
	if cfg.File != "" && io.Env(config.EnvConfig) != "" {
		p, _ := filepath.Abs(cfg.File)
		add(config.EnvConfig, p)
	}
	for _, k := range []string{config.EnvAddr, config.EnvLLMProvider, config.EnvLLMBaseURL, config.EnvLLMModel, config.EnvLLMAPIKey, "HOME", "PATH", "XDG_DATA_HOME"} {
		add(k, io.Env(k))
	}
	slices.SortFunc(s.Env, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	return s, nil
}

// systemdUnit renders the user unit.
func systemdUnit(s serviceSpec) string {
	var b strings.Builder
	b.WriteString("# Written by cyan service install; cyan service uninstall removes it.\n")
	b.WriteString("[Unit]\nDescription=cyan, a persistent companion agent\nAfter=network-online.target\nWants=network-online.target\n\n")
	b.WriteString("[Service]\nType=simple\n")
	fmt.Fprintf(&b, "ExecStart=%s serve\n", systemdQuote(s.Binary))
	for _, kv := range s.Env {
		fmt.Fprintf(&b, "Environment=%s\n", systemdQuote(kv[0]+"="+kv[1]))
	}
	fmt.Fprintf(&b, "Restart=on-failure\nRestartSec=5\nKillSignal=SIGTERM\nTimeoutStopSec=%d\n", int(s.Stop.Seconds()))
	b.WriteString("\n[Install]\nWantedBy=default.target\n")
	return b.String()
}

// systemdQuote quotes a word for a unit file: double quotes, with
// backslashes, quotes, "%" (a specifier) and "$" escaped.
func systemdQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "%", "%%", "$", "$$", "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

// launchdPlist renders the launchd agent.
func launchdPlist(s serviceSpec) string {
	esc := func(v string) string {
		var b bytes.Buffer
		_ = xml.EscapeText(&b, []byte(v))
		return b.String()
	}
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">` + "\n")
	b.WriteString("<plist version=\"1.0\">\n<dict>\n")
	b.WriteString("  <key>Label</key><string>cyan</string>\n")
	fmt.Fprintf(&b, "  <key>ProgramArguments</key><array><string>%s</string><string>serve</string></array>\n", esc(s.Binary))
	b.WriteString("  <key>EnvironmentVariables</key>\n  <dict>\n")
	for _, kv := range s.Env {
		fmt.Fprintf(&b, "    <key>%s</key><string>%s</string>\n", esc(kv[0]), esc(kv[1]))
	}
	b.WriteString("  </dict>\n")
	b.WriteString("  <key>RunAtLoad</key><true/>\n")
	b.WriteString("  <key>KeepAlive</key><dict><key>SuccessfulExit</key><false/></dict>\n")
	fmt.Fprintf(&b, "  <key>ExitTimeOut</key><integer>%d</integer>\n", int(s.Stop.Seconds()))
	fmt.Fprintf(&b, "  <key>StandardErrorPath</key><string>%s</string>\n", esc(filepath.Join(s.DataDir, "cyan.log")))
	b.WriteString("</dict>\n</plist>\n")
	return b.String()
}

// serviceKind is the service manager of this system.
type serviceKind struct {
	name   string // systemd or launchd
	path   string // the unit or agent file
	render func(serviceSpec) string
	start  [][]string // commands after writing
	stop   [][]string // commands before removing
	status []string
}

func serviceFor(io IO) (serviceKind, error) {
	home := io.Env("HOME")
	switch runtime.GOOS {
	case "linux":
		dir := io.Env("XDG_CONFIG_HOME")
		if dir == "" || !filepath.IsAbs(dir) {
			if home == "" {
				return serviceKind{}, errors.New("HOME is not set: cannot find ~/.config/systemd/user")
			}
			dir = filepath.Join(home, ".config")
		}
		return serviceKind{name: "systemd", path: filepath.Join(dir, "systemd", "user", "cyan.service"), render: systemdUnit,
			start:  [][]string{{"systemctl", "--user", "daemon-reload"}, {"systemctl", "--user", "enable", "--now", "cyan.service"}},
			stop:   [][]string{{"systemctl", "--user", "disable", "--now", "cyan.service"}},
			status: []string{"systemctl", "--user", "is-active", "cyan.service"}}, nil
	case "darwin":
		if home == "" {
			return serviceKind{}, errors.New("HOME is not set: cannot find ~/Library/LaunchAgents")
		}
		path := filepath.Join(home, "Library", "LaunchAgents", "cyan.plist")
		domain := "gui/" + strconv.Itoa(os.Getuid())
		return serviceKind{name: "launchd", path: path, render: launchdPlist,
			start:  [][]string{{"launchctl", "bootstrap", domain, path}},
			stop:   [][]string{{"launchctl", "bootout", domain + "/cyan"}},
			status: []string{"launchctl", "print", domain + "/cyan"}}, nil
	}
	return serviceKind{}, fmt.Errorf("cyan service knows systemd (Linux) and launchd (macOS); on %s, run cyan serve from your system's service manager", runtime.GOOS)
}

func runAll(io IO, cmds [][]string) error {
	for _, c := range cmds {
		out, err := exec.Command(c[0], c[1:]...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s: %v: %s", strings.Join(c, " "), err, strings.TrimSpace(string(out)))
		}
		fmt.Fprintf(io.Stderr, "ran %s\n", strings.Join(c, " "))
	}
	return nil
}

func serviceInstall(f *flags) run {
	noStart := f.Bool("no-start", false, "write the unit only, and print the commands that start it")
	binary := f.String("binary", "", "the cyan `binary` the service runs (default: this one)")
	return func(io IO, _ []string) error {
		cfg, err := loadConfig(io)
		if err != nil {
			return err
		}
		k, err := serviceFor(io)
		if err != nil {
			return err
		}
		spec, err := specOf(io, cfg, *binary)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(k.path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(k.path, []byte(k.render(spec)), 0o600); err != nil {
			return fmt.Errorf("write %s: %w", k.path, err)
		}
		fmt.Fprintf(io.Stdout, "wrote %s (%s): cyan serve from %s, data in %s, restarted when it fails\n", k.path, k.name, spec.Binary, spec.DataDir)
		if *noStart {
			for _, c := range k.start {
				fmt.Fprintf(io.Stdout, "start it with: %s\n", strings.Join(c, " "))
			}
			return nil
		}
		if pid, held, _ := store.Holder(cfg.DataDir); held {
			return fmt.Errorf("a cyan (pid %d) already runs on %s; stop it (cyan stop), then start the service: %s", pid, cfg.DataDir, strings.Join(k.start[len(k.start)-1], " "))
		}
		if err := runAll(io, k.start); err != nil {
			return err
		}
		if k.name == "systemd" {
			fmt.Fprintln(io.Stdout, "it starts when you log in; to start it at boot: loginctl enable-linger $USER")
		}
		return nil
	}
}

func serviceUninstall(f *flags) run {
	return func(io IO, _ []string) error {
		k, err := serviceFor(io)
		if err != nil {
			return err
		}
		if _, err := os.Stat(k.path); errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(io.Stdout, "cyan is not installed as a service (%s does not exist)\n", k.path)
			return nil
		}
		if err := runAll(io, k.stop); err != nil {
			fmt.Fprintf(io.Stderr, "%v (removing the file anyway)\n", err)
		}
		if err := os.Remove(k.path); err != nil {
			return err
		}
		if k.name == "systemd" {
			_ = runAll(io, [][]string{{"systemctl", "--user", "daemon-reload"}})
		}
		fmt.Fprintf(io.Stdout, "removed %s\n", k.path)
		return nil
	}
}

func serviceStatus(f *flags) run {
	asJSON := f.json()
	return func(io IO, _ []string) error {
		cfg, err := loadConfig(io)
		if err != nil {
			return err
		}
		k, err := serviceFor(io)
		if err != nil {
			return err
		}
		st := map[string]any{"manager": k.name, "file": k.path, "data_dir": cfg.DataDir}
		_, statErr := os.Stat(k.path)
		st["installed"] = statErr == nil
		state := "unknown"
		if _, err := exec.LookPath(k.status[0]); err == nil {
			out, _ := exec.Command(k.status[0], k.status[1:]...).Output()
			state = strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
		}
		st["manager_state"] = state
		pid, held, _ := store.Holder(cfg.DataDir)
		st["running"], st["pid"] = held, pid
		if *asJSON {
			return printJSON(io.Stdout, st)
		}
		if statErr != nil {
			fmt.Fprintf(io.Stdout, "not installed as a service (no %s); cyan service install does it\n", k.path)
		} else {
			fmt.Fprintf(io.Stdout, "installed: %s (%s says %q)\n", k.path, k.name, state)
		}
		if held {
			fmt.Fprintf(io.Stdout, "a daemon runs on %s (pid %d)\n", cfg.DataDir, pid)
		} else {
			fmt.Fprintf(io.Stdout, "no daemon runs on %s\n", cfg.DataDir)
		}
		return nil
	}
}
