package observer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/cyan-agent/cyan/packets"
)

// Declared is an observer a user declared in the persona folder
// (observers/*.yaml):
//
//	name: water
//	triggers:
//	  - cron: "0 */2 * * *"
//	  - on: Keyword
//	    keywords: [thirsty, 渴]
//	  - every: 3h              # self-decided: it asks itself this often
//	prompt: |
//	  Decide whether a reminder to drink water would be welcome now.
//	script: water_check        # optional: a prompt script of the persona's scripts/
//	budget: 20000              # tokens per day
//	quiet_hours: 23:00-08:00
//	channels: [home]
//	catch_up: false            # default true
//
// When it fires, it decides — from the recent conversation of each channel
// — whether to speak; if so main-virtual speaks first there. The decision
// is a prompt script: the one named by script: (the persona's
// scripts/NAME.ai.yaml, or a built-in one), else the built-in
// observer_decide with prompt: as its instruction. A file needs prompt:,
// script: or both (the prompt is then the script's instruction input).
type Declared struct {
	Name     string
	File     string
	Triggers []Trigger
	Prompt   string
	Script   string
	Budget   int
	Quiet    *QuietHours
	Channels []string
	CatchUp  bool
	// Permission is the observer's own permission object (its "vision
	// scope": infos naming the channels it may read, "history:channel:home";
	// the tools its speech may call); nil: its starter's. The daemon bounds
	// it by its starter's and, when the starter lists distribute_permission
	// presets, loads it only if it is one of them (packets.Permission.Hand).
	Permission *packets.Permission
}

type declaredFile struct {
	Name     string `yaml:"name"`
	Triggers []struct {
		Cron     string   `yaml:"cron"`
		At       string   `yaml:"at"`
		On       string   `yaml:"on"`
		Keywords []string `yaml:"keywords"`
		Every    string   `yaml:"every"`
	} `yaml:"triggers"`
	Prompt     string   `yaml:"prompt"`
	Script     string   `yaml:"script"`
	Budget     int      `yaml:"budget"`
	QuietHours string   `yaml:"quiet_hours"`
	Channels   []string `yaml:"channels"`
	CatchUp    *bool    `yaml:"catch_up"`
	Permission any      `yaml:"permission"`
}

// scriptName is a prompt script's name.
var scriptName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// LoadDeclared reads every observers/*.yaml of a persona folder. A bad file
// is reported (with file and line) and skipped; the others load.
func LoadDeclared(personaDir string) ([]Declared, []error) {
	dir := filepath.Join(personaDir, "observers")
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []error{fmt.Errorf("observers: %w", err)}
	}
	var out []Declared
	var errs []error
	seen := map[string]string{}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if !e.IsDir() && (strings.HasSuffix(e.Name(), ".yaml") || strings.HasSuffix(e.Name(), ".yml")) {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for _, n := range names {
		path := filepath.Join(dir, n)
		data, err := os.ReadFile(path)
		if err != nil {
			errs = append(errs, fmt.Errorf("observers: %w", err))
			continue
		}
		d, err := ParseDeclared(path, data)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if other, dup := seen[d.Name]; dup {
			errs = append(errs, fmt.Errorf("%s: name %q is already used by %s", path, d.Name, other))
			continue
		}
		seen[d.Name] = path
		out = append(out, d)
	}
	return out, errs
}

// CheckSource checks an observer's file before it is written into a
// persona's observers/ folder (the persona/observers component): its
// name ends in .yaml and it loads.
func CheckSource(file string, data []byte) error {
	if !strings.HasSuffix(file, ".yaml") {
		return errors.New("an observer's file ends in .yaml")
	}
	_, err := ParseDeclared(file, data)
	return err
}

// ParseDeclared reads one declaration; errors name the file and line.
func ParseDeclared(file string, data []byte) (Declared, error) {
	var f declaredFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		msg = strings.TrimPrefix(msg, "unmarshal errors:\n  ")
		msg = strings.ReplaceAll(msg, " in type observer.declaredFile", "")
		return Declared{}, fmt.Errorf("%s: %s (known keys: name, triggers, prompt, script, budget, quiet_hours, channels, catch_up, permission)", file, msg)
	}
	d := Declared{Name: strings.TrimSpace(f.Name), File: file, Prompt: strings.TrimSpace(f.Prompt), Script: strings.TrimSpace(f.Script), Budget: f.Budget, Channels: f.Channels, CatchUp: f.CatchUp == nil || *f.CatchUp}
	bad := func(format string, a ...any) (Declared, error) {
		return Declared{}, fmt.Errorf("%s: %s", file, fmt.Sprintf(format, a...))
	}
	switch {
	case d.Name == "":
		return bad("name is missing")
	case strings.ContainsAny(d.Name, " \t\n/:") || strings.HasPrefix(d.Name, "main-observer") || strings.HasPrefix(d.Name, "plan"):
		return bad("name %q: use letters, digits and dashes, and not a built-in name", d.Name)
	case d.Prompt == "" && d.Script == "":
		return bad("prompt is missing: say what the observer watches for and when it should speak (or name a prompt script with script:)")
	case d.Script != "" && !scriptName.MatchString(d.Script):
		return bad("script %q: name a script of the persona's scripts/ folder without its .ai.yaml (letters, digits, _ and -)", d.Script)
	case len(d.Channels) == 0:
		return bad("channels is missing: list the channels it may speak in")
	case len(f.Triggers) == 0:
		return bad("triggers is missing: give at least one (cron, at, on or every)")
	case d.Budget < 0:
		return bad("budget must not be negative")
	}
	if f.Permission != nil {
		raw, err := json.Marshal(f.Permission)
		if err != nil {
			return bad("permission: %v", err)
		}
		d.Permission = new(packets.Permission)
		if err := json.Unmarshal(raw, d.Permission); err != nil {
			return bad("permission: %v", err)
		}
	}
	if f.QuietHours != "" {
		q, err := ParseQuietHours(f.QuietHours)
		if err != nil {
			return bad("%v", err)
		}
		d.Quiet = &q
	}
	for i, t := range f.Triggers {
		tr := Trigger{Cron: t.Cron, On: t.On, Keywords: t.Keywords}
		if t.At != "" {
			at, err := time.Parse(time.RFC3339, t.At)
			if err != nil {
				return bad("trigger %d: at %q is not an RFC3339 time", i+1, t.At)
			}
			tr.At = at
		}
		if t.Every != "" {
			every, err := time.ParseDuration(t.Every)
			if err != nil {
				return bad("trigger %d: every %q is not a duration such as 3h", i+1, t.Every)
			}
			tr.Every = every
		}
		if err := tr.check(); err != nil {
			return bad("trigger %d: %v", i+1, err)
		}
		d.Triggers = append(d.Triggers, tr)
	}
	return d, nil
}
