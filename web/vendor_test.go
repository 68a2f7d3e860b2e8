package web_test

import (
	"io/fs"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/web"
)

// specifier finds the modules an ES module imports (static, bare side-effect
// and dynamic imports), in minified or plain code.
var specifier = regexp.MustCompile(`(?:(?:\}|\bimport\s*\*\s*as\s+[\w$]+|\bimport\s+[\w$]+)\s*from\s*|\bimport\s*\(\s*|\bimport\s*)["']([^"'\s]+)["']`)

// imports are the modules src imports: specifier's matches, found in a
// window around each "import" and "from" (every match holds one of them).
// The same specifiers as specifier over the whole text, for a fraction of
// the CPU: scanning a megabyte of minified three.js with the regexp cost
// seconds under -race.
func imports(src string) []string {
	var specs []string
	seen := map[string]bool{}
	for _, word := range []string{"import", "from"} {
		for off := 0; ; {
			i := strings.Index(src[off:], word)
			if i < 0 {
				break
			}
			i += off
			off = i + len(word)
			// Before the word: at most "import * as <name> "; after it,
			// the specifier.
			window := src[max(0, i-200):min(len(src), i+400)]
			for _, m := range specifier.FindAllStringSubmatch(window, -1) {
				if !seen[m[1]] {
					seen[m[1]] = true
					specs = append(specs, m[1])
				}
			}
		}
	}
	return specs
}

// TestVendoredModules: the vendored three.js and three-vrm are at their
// pinned versions with their licences, and their import graph is closed:
// from the modules vrm.js imports, every import is a relative path to a
// vendored file (no bare name, no other site), and every vendored module
// is reached (nothing shipped that the page never loads).
func TestVendoredModules(t *testing.T) {
	t.Parallel()
	files := web.Files()
	versions, err := fs.ReadFile(files, "app/vendor/VERSIONS")
	if err != nil || !strings.Contains(string(versions), "three 0.187.") || !strings.Contains(string(versions), "@pixiv/three-vrm 3.5.") {
		t.Fatalf("VERSIONS: %q %v", versions, err)
	}
	for _, l := range []string{"app/vendor/three/LICENSE", "app/vendor/three-vrm/LICENSE"} {
		if b, err := fs.ReadFile(files, l); err != nil || !strings.Contains(string(b), "MIT") && !strings.Contains(string(b), "Permission is hereby granted") {
			t.Errorf("%s: %v", l, err)
		}
	}
	seen := map[string]bool{}
	queue := []string{"app/vrm.js"}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if seen[p] {
			continue
		}
		seen[p] = true
		src, err := fs.ReadFile(files, p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		for _, spec := range imports(string(src)) {
			if !strings.HasPrefix(spec, "./") && !strings.HasPrefix(spec, "../") {
				t.Errorf("%s imports %q: not a relative path to a vendored file", p, spec)
				continue
			}
			queue = append(queue, path.Join(path.Dir(p), spec))
		}
	}
	fs.WalkDir(files, "app/vendor", func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".js") && !seen[p] {
			t.Errorf("%s is vendored but nothing imports it", p)
		}
		return err
	})
	if len(seen) != 7 {
		t.Errorf("the VRM avatar loads %d modules: %v", len(seen), seen)
	}
}
