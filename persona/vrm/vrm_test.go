package vrm

import (
	"encoding/binary"
	"strings"
	"testing"
)

// glb wraps a JSON document as a glTF binary with no BIN chunk.
func glb(js string) []byte {
	for len(js)%4 != 0 {
		js += " "
	}
	b := make([]byte, 20, 20+len(js))
	binary.LittleEndian.PutUint32(b, magic)
	binary.LittleEndian.PutUint32(b[4:], 2)
	binary.LittleEndian.PutUint32(b[8:], uint32(20+len(js)))
	binary.LittleEndian.PutUint32(b[12:], uint32(len(js)))
	binary.LittleEndian.PutUint32(b[16:], chunkJSON)
	return append(b, js...)
}

const (
	v1 = `{"asset":{"version":"2.0"},"extensions":{"VRMC_vrm":{"specVersion":"1.0","meta":{"name":"Vivi"},"expressions":{"preset":{"happy":{},"aa":{}},"custom":{"wink":{}}}}}}`
	v0 = `{"asset":{"version":"2.0"},"extensions":{"VRM":{"meta":{"title":"Old"},"blendShapeMaster":{"blendShapeGroups":[{"name":"Joy","presetName":"joy"},{"name":"A","presetName":"a"},{"name":"Smirk","presetName":"unknown"}]}}}}`
)

// TestRead: VRM 1.0 and 0.x models are named with their expressions; other
// files get an error that says what they are.
func TestRead(t *testing.T) {
	i, err := Read(glb(v1))
	if err != nil || i.String() != `VRM 1.0 "Vivi", 3 expressions` || strings.Join(i.Expressions, ",") != "aa,happy,wink" {
		t.Errorf("1.0: %v %v %v", i, i.Expressions, err)
	}
	i, err = Read(glb(v0))
	if err != nil || i.Version != "0.x" || i.Title != "Old" || strings.Join(i.Expressions, ",") != "Smirk,a,joy" {
		t.Errorf("0.x: %+v %v", i, err)
	}
	for name, c := range map[string]struct {
		data []byte
		want string
	}{
		"png":       {[]byte("\x89PNG\r\n\x1a\n0000000000000000"), `does not start with "glTF"`},
		"gltf 1":    {func() []byte { b := glb(v1); b[4] = 1; return b }(), "version 1"},
		"cut":       {glb(v1)[:40], "cut short"},
		"not json":  {glb("{nope"), "does not parse"},
		"plain glb": {glb(`{"asset":{"version":"2.0"}}`), "not a VRM one"},
	} {
		if _, err := Read(c.data); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

func FuzzRead(f *testing.F) {
	f.Add(glb(v1))
	f.Add(glb(v0))
	f.Add([]byte("glTF"))
	f.Fuzz(func(t *testing.T, data []byte) {
		i, err := Read(data)
		if err == nil && i.Version == "" {
			t.Errorf("a model with no version: %+v", i)
		}
	})
}
