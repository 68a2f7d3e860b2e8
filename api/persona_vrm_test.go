package api

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// TestPersonaVRM: a persona folder's avatar.vrm is named by GET
// /api/v1/persona ("vrm") and served as a glTF binary; a folder without
// one names none and answers 404 with what to do.
func TestPersonaVRM(t *testing.T) {
	dir := t.TempDir()
	r := newRig(t, func(o *Options) {
		o.Persona = func() PersonaInfo { return PersonaInfo{Name: "n", Color: "#000000", Dir: dir} }
	})
	if code, body := r.do(t, "GET", "/api/v1/persona", ""); code != 200 || body["vrm"] != nil {
		t.Fatalf("no VRM: %d %v", code, body)
	}
	resp, err := http.Get(r.srv.URL + "/api/v1/persona/avatar.vrm")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("missing VRM: %d", resp.StatusCode)
	}
	os.WriteFile(filepath.Join(dir, VRMFile), []byte("glTF-model"), 0o644)
	os.WriteFile(filepath.Join(dir, "avatar-expressions.json"), []byte(`{"happy": {"relaxed": 1}}`), 0o644)
	if code, body := r.do(t, "GET", "/api/v1/persona", ""); code != 200 || body["vrm"] != "/api/v1/persona/avatar.vrm" ||
		fmt.Sprint(body["vrm_expressions"]) != "map[happy:map[relaxed:1]]" {
		t.Fatalf("with VRM: %d %v", code, body)
	}
	resp, err = http.Get(r.srv.URL + "/api/v1/persona/avatar.vrm")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "glTF-model" || resp.Header.Get("Content-Type") != "model/gltf-binary" {
		t.Fatalf("VRM: %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
}
