package cmd

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/persona"
)

// daemonSide is what a running daemon says of its persona and its
// configuration file (GET /api/v1/persona).
type daemonSide struct {
	Name       string `json:"name"`
	ID         string `json:"id"`
	Channel    string `json:"channel"`
	ConfigFile string `json:"config_file"`
}

// configTarget is the configuration file `persona:` goes in: the running
// daemon's (it says which, on GET /api/v1/persona), else the one this
// shell's environment names ($CYAN_CONFIG, or cyan.yaml in the data
// folder). running is the daemon's answer, nil when none answered.
func configTarget(io IO) (file string, running *daemonSide, err error) {
	cfg, err := loadConfig(io)
	if err != nil {
		return "", nil, err
	}
	c := newClient(cfg)
	c.http.Timeout = 3 * time.Second
	var side daemonSide
	if err := c.do("GET", "/api/v1/persona", nil, &side); err == nil && side.ConfigFile != "" {
		return side.ConfigFile, &side, nil
	}
	file = cfg.File
	if file == "" {
		file = filepath.Join(cfg.DataDir, config.FileName)
	}
	if abs, err := filepath.Abs(file); err == nil {
		file = abs
	}
	return file, nil, nil
}

func personaUse(f *flags) run {
	asJSON := f.json()
	return func(io IO, args []string) error {
		return usePersona(io, args[0], *asJSON)
	}
}

// builtinNames name the built-in persona to `cyan persona use`.
var builtinNames = []string{"default", "builtin", "built-in"}

// usePersona makes the persona folder arg (a path, or a folder's name
// beside the configuration file; "default" for the built-in persona) the
// persona of the configuration file the daemon reads, and says what the
// page will open.
func usePersona(io IO, arg string, asJSON bool) error {
	file, running, err := configTarget(io)
	if err != nil {
		return err
	}
	dir, p, err := findPersona(arg, filepath.Dir(file))
	if err != nil {
		return err
	}
	old, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read %s: %w", file, err)
	}
	line := ""
	if dir != "" {
		v, _ := yaml.Marshal(dir)
		line = "persona: " + strings.TrimSpace(string(v))
	}
	text := setPersonaLine(old, line)
	if len(bytes.TrimSpace(text)) == 0 {
		text = []byte("{}\n") // an empty file is no configuration
	}
	if old != nil || line != "" { // no file and the built-in persona: nothing to write
		if err := writeConfig(io, file, old, text); err != nil {
			return err
		}
	}
	channel := persona.PageChannelOf(p)
	if dir == "" {
		channel = persona.PageChannel
	}
	if asJSON {
		out := map[string]any{"name": p.Name, "id": p.ID(), "folder": dir, "channel": channel, "config_file": file, "restart": running != nil && running.Channel != channel}
		return printJSON(io.Stdout, out)
	}
	w := io.Stdout
	if dir == "" {
		fmt.Fprintf(w, "%s now uses the built-in persona %s (no persona: line)\n", file, p.Name)
	} else {
		fmt.Fprintf(w, "%s now says %s\n", file, line)
	}
	fmt.Fprintf(w, "The page opens %s's own conversation, %s; every other character's stays where it was (cyan persona use switches back).\n", p.Name, channel)
	switch {
	case running != nil && running.Channel == channel:
		fmt.Fprintf(w, "The running daemon already talks as %s.\n", running.Name)
	case running != nil:
		fmt.Fprintf(w, "Restart cyan serve to switch from %s (an open page follows).\n", running.Name)
	default:
		fmt.Fprintln(w, "Start cyan serve to talk with it.")
	}
	return nil
}

// findPersona finds the persona arg names: "" and the built-in persona for
// "default" (or its name), else a folder with persona.md: the path arg,
// or arg beside the configuration file.
func findPersona(arg, beside string) (string, *persona.Persona, error) {
	def, err := persona.Default()
	if err != nil {
		return "", nil, err
	}
	for _, n := range append(builtinNames, def.Name) {
		if strings.EqualFold(arg, n) {
			if _, err := os.Stat(arg); err != nil {
				return "", def, nil
			}
		}
	}
	tries := []string{arg}
	if !filepath.IsAbs(arg) {
		tries = append(tries, filepath.Join(beside, arg))
	}
	for _, d := range tries {
		if _, err := os.Stat(filepath.Join(d, persona.FileName)); err != nil {
			continue
		}
		abs, err := filepath.Abs(d)
		if err != nil {
			return "", nil, err
		}
		p, err := persona.Load(abs)
		if err != nil {
			return "", nil, badInput("%s: %w (fix it, then run cyan persona use again)", abs, err)
		}
		return abs, p, nil
	}
	return "", nil, badInput("no persona folder %q (looked for %s in %s): name a folder cyan persona import wrote, or default for the built-in %s",
		arg, persona.FileName, strings.Join(tries, " and "), def.Name)
}

// personaLine is a top-level persona: line of a YAML file.
var personaLine = regexp.MustCompile(`^persona[ \t]*:`)

// setPersonaLine sets the persona: line of a configuration file's text:
// the first top-level one is replaced (any other removed), or line is
// added at the end; an empty line removes them.
func setPersonaLine(text []byte, line string) []byte {
	var out []string
	done := false
	lines := strings.SplitAfter(string(text), "\n")
	for _, l := range lines {
		if !personaLine.MatchString(l) {
			out = append(out, l)
			continue
		}
		if !done && line != "" {
			out = append(out, line+"\n")
		}
		done = true
	}
	s := strings.Join(out, "")
	if !done && line != "" {
		if s != "" && !strings.HasSuffix(s, "\n") {
			s += "\n"
		}
		s += line + "\n"
	}
	return []byte(s)
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r == ':' || r == '+' || r == '@' || unicode.IsLetter(r) || unicode.IsDigit(r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// writeConfig writes text into the configuration file, and puts old back
// (or removes the file it made) when the result does not load.
func writeConfig(io IO, file string, old, text []byte) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(file, text, 0o600); err != nil {
		return err
	}
	_, err := config.Load(func(k string) string {
		if k == config.EnvConfig {
			return file
		}
		return io.Env(k)
	})
	if err == nil {
		return nil
	}
	if old == nil {
		_ = os.Remove(file)
	} else {
		_ = os.WriteFile(file, old, 0o600)
	}
	return fmt.Errorf("%s does not load with the new persona line, left as it was: %w", file, err)
}
