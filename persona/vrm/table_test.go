package vrm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTable: a persona's avatar-expressions.json overrides the table; what
// is not a weight from 0 to 1 is refused, saying where.
func TestTable(t *testing.T) {
	dir := t.TempDir()
	if got, err := ReadTable(dir); got != nil || err != nil {
		t.Errorf("no file: %v %v", got, err)
	}
	os.WriteFile(filepath.Join(dir, TableFile), []byte(`{"happy": {"happy": 1, "surprised": 0.25}, "gentle": {}}`), 0o644)
	got, err := ReadTable(dir)
	if err != nil || got["happy"]["happy"] != 1 || got["happy"]["surprised"] != 0.25 || got["gentle"] == nil {
		t.Errorf("%v %v", got, err)
	}
	for js, want := range map[string]string{
		`"happy"`:                  "want an object",
		`{"happy": 1}`:             "happy: want",
		`{"happy": {"happy": 2}}`:  "happy: happy: the weight 2",
		`{"sad": {"sad": "lots"}}`: "sad: sad: the weight lots",
		`{"sad": `:                 "unexpected end",
	} {
		os.WriteFile(filepath.Join(dir, TableFile), []byte(js), 0o644)
		if _, err := ReadTable(dir); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", js, err, want)
		}
	}
}

func FuzzTable(f *testing.F) {
	f.Add([]byte(`{"happy": {"happy": 1}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, TableFile), data, 0o644)
		got, err := ReadTable(dir)
		for _, row := range got {
			for _, w := range row {
				if err == nil && (w < 0 || w > 1) {
					t.Errorf("weight %v accepted", w)
				}
			}
		}
	})
}
