package vrm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// TableFile, in a persona folder beside avatar.vrm, overrides the page's
// table from cyan's emotions to the model's expressions, emotion by
// emotion:
//
//	{"happy": {"happy": 1, "surprised": 0.2}, "gentle": {"relaxed": 0.5, "happy": 0.3}}
//
// An expression is a VRM 1.0 name (happy, angry, sad, relaxed, surprised,
// neutral, or a model's own); a VRM 0.x model's joy, sorrow and fun are read
// as happy, sad and relaxed. Weights are 0 to 1.
const TableFile = "avatar-expressions.json"

// ReadTable reads dir's TableFile: nil when there is none.
func ReadTable(dir string) (map[string]map[string]float64, error) {
	if dir == "" {
		return nil, nil
	}
	data, err := os.ReadFile(filepath.Join(dir, TableFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("%s: %v", TableFile, err)
	}
	return Table(v)
}

// Table reads a decoded TableFile.
func Table(v any) (map[string]map[string]float64, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: want an object of emotion to {expression: weight}, got %T", TableFile, v)
	}
	out := map[string]map[string]float64{}
	emotions := make([]string, 0, len(m))
	for e := range m {
		emotions = append(emotions, e)
	}
	slices.Sort(emotions)
	for _, e := range emotions {
		row, ok := m[e].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: %s: want {expression: weight}, e.g. {\"happy\": 1}", TableFile, e)
		}
		out[e] = map[string]float64{}
		for x, w := range row {
			f, ok := w.(float64)
			if !ok || f < 0 || f > 1 || strings.TrimSpace(x) == "" {
				return nil, fmt.Errorf("%s: %s: %s: the weight %v is not a number from 0 to 1", TableFile, e, x, w)
			}
			out[e][x] = f
		}
	}
	return out, nil
}
