package vrm

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// FileName is the persona folder's VRM model.
const FileName = "avatar.vrm"

// Info is what a VRM model says of itself.
type Info struct {
	Version     string   // "1.0" (VRMC_vrm's specVersion) or "0.x"
	Title       string   // meta name (1.0) or title (0.x); may be empty
	Expressions []string // expression (1.0) or blend shape preset (0.x) names, sorted
}

// String is how cyan names the model: VRM 1.0 "Title", 12 expressions.
func (i Info) String() string {
	s := "VRM " + i.Version
	if i.Title != "" {
		s += fmt.Sprintf(" %q", i.Title)
	}
	return s + fmt.Sprintf(", %d expressions", len(i.Expressions))
}

const (
	magic     = 0x46546C67 // "glTF"
	chunkJSON = 0x4E4F534A // "JSON"
)

// Read reads a VRM model's header and JSON chunk. Its errors say what
// the file is instead and what to give.
func Read(data []byte) (Info, error) {
	const hint = "export the model as .vrm (VRoid Studio, UniVRM)"
	if len(data) < 20 || binary.LittleEndian.Uint32(data) != magic {
		return Info{}, fmt.Errorf("not a VRM model: a .vrm is a glTF binary, and this file does not start with \"glTF\" (%s)", hint)
	}
	if v := binary.LittleEndian.Uint32(data[4:]); v != 2 {
		return Info{}, fmt.Errorf("not a VRM model: glTF binary version %d, VRM needs 2 (%s)", v, hint)
	}
	n := uint64(binary.LittleEndian.Uint32(data[12:]))
	if binary.LittleEndian.Uint32(data[16:]) != chunkJSON || 20+n > uint64(len(data)) {
		return Info{}, errors.New("not a VRM model: its glTF JSON chunk is missing or cut short (is the file whole?)")
	}
	var doc struct {
		Extensions struct {
			V1 *struct {
				SpecVersion string `json:"specVersion"`
				Meta        struct {
					Name string `json:"name"`
				} `json:"meta"`
				Expressions struct {
					Preset map[string]json.RawMessage `json:"preset"`
					Custom map[string]json.RawMessage `json:"custom"`
				} `json:"expressions"`
			} `json:"VRMC_vrm"`
			V0 *struct {
				Meta struct {
					Title string `json:"title"`
				} `json:"meta"`
				BlendShapeMaster struct {
					Groups []struct {
						Name       string `json:"name"`
						PresetName string `json:"presetName"`
					} `json:"blendShapeGroups"`
				} `json:"blendShapeMaster"`
			} `json:"VRM"`
		} `json:"extensions"`
	}
	if err := json.Unmarshal(data[20:20+n], &doc); err != nil {
		return Info{}, fmt.Errorf("not a VRM model: its glTF JSON does not parse: %v", err)
	}
	var i Info
	switch v1, v0 := doc.Extensions.V1, doc.Extensions.V0; {
	case v1 != nil:
		i.Version, i.Title = v1.SpecVersion, v1.Meta.Name
		if i.Version == "" {
			i.Version = "1.0"
		}
		for k := range v1.Expressions.Preset {
			i.Expressions = append(i.Expressions, k)
		}
		for k := range v1.Expressions.Custom {
			i.Expressions = append(i.Expressions, k)
		}
	case v0 != nil:
		i.Version, i.Title = "0.x", v0.Meta.Title
		for _, g := range v0.BlendShapeMaster.Groups {
			name := g.PresetName
			if name == "" || name == "unknown" {
				name = g.Name
			}
			if name != "" && !slices.Contains(i.Expressions, name) {
				i.Expressions = append(i.Expressions, name)
			}
		}
	default:
		return Info{}, fmt.Errorf("a glTF model but not a VRM one (no VRM or VRMC_vrm extension): %s", hint)
	}
	slices.Sort(i.Expressions)
	return i, nil
}
