package web_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
)

// testVRM builds a small VRM model for the page's tests, so no downloaded
// model is needed: VRM 1.0 (a glTF 2.0 binary with the VRMC_vrm
// extension, facing +Z) or, with v0, VRM 0.x (the VRM extension, facing
// -Z, blend shape groups joy, angry, sorrow, fun, blink, a, i, u, e, o and a
// custom "surprised"). Either has the 15 humanoid bones VRM requires as a chain of nodes, a torso
// box, and a flat face (head disc, two eyes, a mouth, coloured by vertex)
// whose morph targets are bound to the expressions happy, angry, sad,
// relaxed, surprised, blink and the visemes aa, ih, ou, ee, oh. The
// materials are unlit (KHR_materials_unlit), so the model needs no normals.
func testVRM(v0 bool) []byte {
	g := &glb{}
	zs := float32(1) // the way the face looks
	if v0 {
		zs = -1
	}

	// The face, in the head's frame: +Y up, facing +Z (VRM 1.0).
	type quad struct{ x0, y0, x1, y1 float32 }
	skin := [3]float32{1, 0.86, 0.78}
	dark := [3]float32{0.1, 0.12, 0.16}
	lips := [3]float32{0.6, 0.16, 0.24}
	var pos, col []float32
	var idx []uint16
	vert := func(x, y, z float32, c [3]float32) uint16 {
		pos = append(pos, x, y, z)
		col = append(col, c[0], c[1], c[2], 1)
		return uint16(len(pos)/3 - 1)
	}
	// Head: a 16-sided disc of radius .11 (vertices 0…16).
	centre := vert(0, 0, 0, skin)
	for i := range 16 {
		a := float64(i) * 2 * math.Pi / 16
		vert(float32(0.11*math.Cos(a)), float32(0.13*math.Sin(a)), 0, skin)
	}
	for i := range 16 {
		idx = append(idx, centre, uint16(1+i), uint16(1+(i+1)%16))
	}
	rect := func(q quad, c [3]float32) [4]uint16 { // bottom-left, bottom-right, top-right, top-left
		v := [4]uint16{vert(q.x0, q.y0, 0.002*zs, c), vert(q.x1, q.y0, 0.002*zs, c), vert(q.x1, q.y1, 0.002*zs, c), vert(q.x0, q.y1, 0.002*zs, c)}
		idx = append(idx, v[0], v[1], v[2], v[0], v[2], v[3])
		return v
	}
	eyeL := rect(quad{-0.055, 0.0, -0.025, 0.035}, dark)
	eyeR := rect(quad{0.025, 0.0, 0.055, 0.035}, dark)
	mouth := rect(quad{-0.03, -0.06, 0.03, -0.054}, lips)

	// Morph targets: position offsets of the vertices named.
	n := len(pos) / 3
	type move struct {
		v      uint16
		dx, dy float32
	}
	target := func(moves ...move) []float32 {
		d := make([]float32, 3*n)
		for _, m := range moves {
			d[3*int(m.v)] += m.dx
			d[3*int(m.v)+1] += m.dy
		}
		return d
	}
	eyesTop := func(dy float32) []move {
		return []move{{eyeL[2], 0, dy}, {eyeL[3], 0, dy}, {eyeR[2], 0, dy}, {eyeR[3], 0, dy}}
	}
	mouthOpen := func(dy, dx float32) []move {
		return []move{{mouth[0], -dx, -dy}, {mouth[1], dx, -dy}, {mouth[2], dx, 0}, {mouth[3], -dx, 0}}
	}
	targets := []struct {
		name  string
		delta []float32
	}{
		{"happy", target(append(eyesTop(-0.02), move{mouth[2], 0.005, 0.012}, move{mouth[3], -0.005, 0.012}, move{mouth[0], 0, -0.01}, move{mouth[1], 0, -0.01})...)},
		{"angry", target(append(eyesTop(-0.012), move{mouth[2], 0, -0.004}, move{mouth[3], 0, -0.004})...)},
		{"sad", target(append(eyesTop(-0.008), move{mouth[0], 0.008, -0.008}, move{mouth[1], -0.008, -0.008})...)},
		{"relaxed", target(append(eyesTop(-0.015), move{mouth[0], 0, -0.004}, move{mouth[1], 0, -0.004})...)},
		{"surprised", target(append(eyesTop(0.012), mouthOpen(0.02, -0.012)...)...)},
		{"blink", target(eyesTop(-0.034)...)},
		{"aa", target(mouthOpen(0.035, 0.004)...)},
		{"ih", target(mouthOpen(0.012, 0.01)...)},
		{"ou", target(mouthOpen(0.02, -0.015)...)},
		{"ee", target(mouthOpen(0.01, 0.016)...)},
		{"oh", target(mouthOpen(0.028, -0.008)...)},
	}

	faceAttrs := map[string]int{"POSITION": g.vec3(pos, true), "COLOR_0": g.floats(col, "VEC4")}
	var faceTargets []map[string]int
	var names []string
	for _, t := range targets {
		faceTargets = append(faceTargets, map[string]int{"POSITION": g.vec3(t.delta, true)})
		names = append(names, t.name)
	}
	faceIdx := g.indices(idx)

	// The torso: a box .34 wide, .5 high, .18 deep, in the hips' frame.
	var bpos, bcol []float32
	var bidx []uint16
	shirt := [3]float32{0.11, 0.46, 0.7}
	for _, c := range [8][3]float32{{-1, 0, -1}, {1, 0, -1}, {1, 1, -1}, {-1, 1, -1}, {-1, 0, 1}, {1, 0, 1}, {1, 1, 1}, {-1, 1, 1}} {
		bpos = append(bpos, c[0]*0.17, c[1]*0.5, c[2]*0.09)
		bcol = append(bcol, shirt[0]*(0.8+0.2*c[2]), shirt[1], shirt[2], 1)
	}
	for _, f := range [6][4]uint16{{0, 1, 2, 3}, {4, 5, 6, 7}, {0, 1, 5, 4}, {3, 2, 6, 7}, {0, 3, 7, 4}, {1, 2, 6, 5}} {
		bidx = append(bidx, f[0], f[1], f[2], f[0], f[2], f[3])
	}
	// The neck: a thin box from the torso to the head.
	base := uint16(len(bpos) / 3)
	for _, c := range [8][3]float32{{-1, 0, -1}, {1, 0, -1}, {1, 1, -1}, {-1, 1, -1}, {-1, 0, 1}, {1, 0, 1}, {1, 1, 1}, {-1, 1, 1}} {
		bpos = append(bpos, c[0]*0.04, 0.5+c[1]*0.1, c[2]*0.04)
		bcol = append(bcol, skin[0]*0.9, skin[1]*0.9, skin[2]*0.9, 1)
	}
	for _, f := range [6][4]uint16{{0, 1, 2, 3}, {4, 5, 6, 7}, {0, 1, 5, 4}, {3, 2, 6, 7}, {0, 3, 7, 4}, {1, 2, 6, 5}} {
		bidx = append(bidx, base+f[0], base+f[1], base+f[2], base+f[0], base+f[2], base+f[3])
	}
	bodyAttrs := map[string]int{"POSITION": g.vec3(bpos, true), "COLOR_0": g.floats(bcol, "VEC4")}
	bodyIdx := g.indices(bidx)

	material := map[string]any{
		"pbrMetallicRoughness": map[string]any{"baseColorFactor": []float32{1, 1, 1, 1}, "metallicFactor": 0},
		"doubleSided":          true,
		"extensions":           map[string]any{"KHR_materials_unlit": map[string]any{}},
	}
	meshes := []any{
		map[string]any{"name": "face", "primitives": []any{map[string]any{"attributes": faceAttrs, "indices": faceIdx, "material": 0, "targets": faceTargets}},
			"weights": make([]float32, len(targets)), "extras": map[string]any{"targetNames": names}},
		map[string]any{"name": "body", "primitives": []any{map[string]any{"attributes": bodyAttrs, "indices": bodyIdx, "material": 0}}},
	}

	// The skeleton: name, parent, translation; the humanoid's bones.
	type bone struct {
		name    string
		parent  int
		t       [3]float32
		mesh    int // -1: none
		isHuman bool
	}
	bones := []bone{
		{"hips", -1, [3]float32{0, 0.9, 0}, 1, true},
		{"spine", 0, [3]float32{0, 0.15, 0}, -1, true},
		{"chest", 1, [3]float32{0, 0.18, 0}, -1, true},
		{"neck", 2, [3]float32{0, 0.2, 0}, -1, true},
		{"head", 3, [3]float32{0, 0.1, 0}, -1, true},
		{"face", 4, [3]float32{0, 0.12, 0.05 * zs}, 0, false},
		{"leftUpperLeg", 0, [3]float32{0.09, -0.05, 0}, -1, true},
		{"leftLowerLeg", 6, [3]float32{0, -0.4, 0}, -1, true},
		{"leftFoot", 7, [3]float32{0, -0.4, 0}, -1, true},
		{"rightUpperLeg", 0, [3]float32{-0.09, -0.05, 0}, -1, true},
		{"rightLowerLeg", 9, [3]float32{0, -0.4, 0}, -1, true},
		{"rightFoot", 10, [3]float32{0, -0.4, 0}, -1, true},
		{"leftUpperArm", 2, [3]float32{0.19, 0.12, 0}, -1, true},
		{"leftLowerArm", 12, [3]float32{0.25, 0, 0}, -1, true},
		{"leftHand", 13, [3]float32{0.25, 0, 0}, -1, true},
		{"rightUpperArm", 2, [3]float32{-0.19, 0.12, 0}, -1, true},
		{"rightLowerArm", 15, [3]float32{-0.25, 0, 0}, -1, true},
		{"rightHand", 16, [3]float32{-0.25, 0, 0}, -1, true},
	}
	var nodes []any
	human := map[string]any{}
	for i, b := range bones {
		node := map[string]any{"name": b.name, "translation": b.t}
		var kids []int
		for j, c := range bones {
			if c.parent == i {
				kids = append(kids, j)
			}
		}
		if len(kids) > 0 {
			node["children"] = kids
		}
		if b.mesh >= 0 {
			node["mesh"] = b.mesh
		}
		nodes = append(nodes, node)
		if b.isHuman {
			human[b.name] = map[string]any{"node": i}
		}
	}
	const faceNode = 5
	preset := map[string]any{}
	for i, t := range targets {
		e := map[string]any{"morphTargetBinds": []any{map[string]any{"node": faceNode, "index": i, "weight": 1}}}
		switch t.name {
		case "happy", "angry", "sad", "relaxed", "surprised":
			e["overrideBlink"] = "blend"
		}
		preset[t.name] = e
	}
	preset["neutral"] = map[string]any{}

	ext := map[string]any{"VRMC_vrm": map[string]any{
		"specVersion": "1.0",
		"meta": map[string]any{"name": "cyan test model", "version": "1", "authors": []string{"cyan"},
			"licenseUrl": "https://vrm.dev/licenses/1.0/", "avatarPermission": "everyone", "commercialUsage": "personalNonProfit",
			"creditNotation": "unnecessary", "allowRedistribution": true, "modification": "allowModificationRedistribution"},
		"humanoid":    map[string]any{"humanBones": human},
		"expressions": map[string]any{"preset": preset},
	}}
	if v0 {
		v0names := map[string]string{"happy": "joy", "angry": "angry", "sad": "sorrow", "relaxed": "fun", "blink": "blink",
			"aa": "a", "ih": "i", "ou": "u", "ee": "e", "oh": "o", "surprised": "unknown"}
		var groups, bones0 []any
		for i, t := range targets {
			groups = append(groups, map[string]any{"name": t.name, "presetName": v0names[t.name],
				"binds": []any{map[string]any{"mesh": 0, "index": i, "weight": 100}}})
		}
		groups = append(groups, map[string]any{"name": "Neutral", "presetName": "neutral"})
		for name, b := range human {
			bones0 = append(bones0, map[string]any{"bone": name, "node": b.(map[string]any)["node"]})
		}
		ext = map[string]any{"VRM": map[string]any{
			"specVersion":      "0.0",
			"meta":             map[string]any{"title": "cyan test model 0.x", "version": "1", "author": "cyan", "allowedUserName": "Everyone", "licenseName": "CC0"},
			"humanoid":         map[string]any{"humanBones": bones0},
			"blendShapeMaster": map[string]any{"blendShapeGroups": groups},
		}}
	}
	used := []string{"KHR_materials_unlit"}
	for k := range ext {
		used = append(used, k)
	}
	doc := map[string]any{
		"asset":          map[string]any{"version": "2.0", "generator": "cyan web tests"},
		"extensionsUsed": used,
		"scene":          0,
		"scenes":         []any{map[string]any{"nodes": []int{0}}},
		"nodes":          nodes,
		"meshes":         meshes,
		"materials":      []any{material},
		"extensions":     ext,
	}
	return g.encode(doc)
}

// glb accumulates a glTF binary buffer and its bufferViews and accessors.
type glb struct {
	bin         bytes.Buffer
	views, accs []any
}

func (g *glb) view(data []byte, target int) int {
	for g.bin.Len()%4 != 0 {
		g.bin.WriteByte(0)
	}
	v := map[string]any{"buffer": 0, "byteOffset": g.bin.Len(), "byteLength": len(data)}
	if target != 0 {
		v["target"] = target
	}
	g.bin.Write(data)
	g.views = append(g.views, v)
	return len(g.views) - 1
}

func (g *glb) floats(f []float32, typ string) int {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, f)
	per := map[string]int{"VEC3": 3, "VEC4": 4}[typ]
	g.accs = append(g.accs, map[string]any{"bufferView": g.view(b.Bytes(), 34962), "componentType": 5126, "count": len(f) / per, "type": typ})
	return len(g.accs) - 1
}

// vec3 is a VEC3 float accessor, with min and max (required of POSITION).
func (g *glb) vec3(f []float32, bounds bool) int {
	i := g.floats(f, "VEC3")
	if bounds {
		lo := []float32{math.MaxFloat32, math.MaxFloat32, math.MaxFloat32}
		hi := []float32{-math.MaxFloat32, -math.MaxFloat32, -math.MaxFloat32}
		for j, x := range f {
			lo[j%3], hi[j%3] = min(lo[j%3], x), max(hi[j%3], x)
		}
		a := g.accs[i].(map[string]any)
		a["min"], a["max"] = lo, hi
	}
	return i
}

func (g *glb) indices(ix []uint16) int {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, ix)
	g.accs = append(g.accs, map[string]any{"bufferView": g.view(b.Bytes(), 34963), "componentType": 5123, "count": len(ix), "type": "SCALAR"})
	return len(g.accs) - 1
}

// encode writes the GLB: header, JSON chunk (space-padded), BIN chunk.
func (g *glb) encode(doc map[string]any) []byte {
	for g.bin.Len()%4 != 0 {
		g.bin.WriteByte(0)
	}
	doc["buffers"] = []any{map[string]any{"byteLength": g.bin.Len()}}
	doc["bufferViews"] = g.views
	doc["accessors"] = g.accs
	js, err := json.Marshal(doc)
	if err != nil {
		panic(err)
	}
	for len(js)%4 != 0 {
		js = append(js, ' ')
	}
	var out bytes.Buffer
	le := func(v uint32) { binary.Write(&out, binary.LittleEndian, v) }
	le(0x46546C67) // "glTF"
	le(2)
	le(uint32(12 + 8 + len(js) + 8 + g.bin.Len()))
	le(uint32(len(js)))
	le(0x4E4F534A) // "JSON"
	out.Write(js)
	le(uint32(g.bin.Len()))
	le(0x004E4942) // "BIN\0"
	out.Write(g.bin.Bytes())
	return out.Bytes()
}
