package cmd

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// buildInfo is what cyan version prints: the module version, and the VCS
// revision the binary was built from (debug.ReadBuildInfo; go build
// stamps it when it builds inside the repository).
type buildInfo struct {
	// Version is the one set with -ldflags, else the module's version
	// (a tag, or a pseudo-version ending in +dirty for a modified work
	// tree), else "dev".
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"`
	Time     string `json:"time,omitempty"` // the revision's commit time
	Modified bool   `json:"modified"`       // built from a work tree with changes
	Go       string `json:"go"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
}

func version() buildInfo { return versionOf(debug.ReadBuildInfo()) }

// versionOf reads the build information.
func versionOf(bi *debug.BuildInfo, ok bool) buildInfo {
	b := buildInfo{Version: Version, Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if !ok {
		return b
	}
	if b.Version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		b.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// short is the version with the revision: "v1.2.0", "dev (0ee339d1a2b3,
// modified)".
func (b buildInfo) short() string {
	if b.Revision == "" {
		return b.Version
	}
	rev := b.Revision[:min(12, len(b.Revision))]
	if strings.Contains(b.Version, rev) && !b.Modified {
		return b.Version
	}
	if b.Modified {
		rev += ", modified"
	}
	return fmt.Sprintf("%s (%s)", b.Version, rev)
}

func versionCmd(f *flags) run {
	asJSON := f.json()
	return func(io IO, _ []string) error {
		b := version()
		if *asJSON {
			return printJSON(io.Stdout, b)
		}
		fmt.Fprintf(io.Stdout, "cyan %s\n", b.Version)
		switch {
		case b.Revision == "":
			fmt.Fprintln(io.Stdout, "revision: unknown (built without VCS information, e.g. by go run or go test)")
		default:
			state := "clean"
			if b.Modified {
				state = "modified: built from a work tree with uncommitted changes"
			}
			when := ""
			if b.Time != "" {
				when = " of " + b.Time
			}
			fmt.Fprintf(io.Stdout, "revision: %s%s (%s)\n", b.Revision, when, state)
		}
		fmt.Fprintf(io.Stdout, "go: %s %s/%s\n", b.Go, b.OS, b.Arch)
		return nil
	}
}
