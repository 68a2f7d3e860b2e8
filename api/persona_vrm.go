package api

import (
	"net/http"
	"os"
	"path/filepath"

	"github.com/cyan-agent/cyan/persona/vrm"
)

// VRMFile is the persona folder's 3D avatar, a VRM model (0.x or 1.0):
// the page shows it in place of the drawn face when it is there.
const VRMFile = vrm.FileName

// vrmURL is where the page fetches the persona's VRM ("" when its folder
// has none).
func vrmURL(dir string) string {
	if dir == "" {
		return ""
	}
	st, err := os.Stat(filepath.Join(dir, VRMFile))
	if err != nil || !st.Mode().IsRegular() || st.Size() == 0 {
		return ""
	}
	return "/api/v1/persona/avatar.vrm"
}

// personaVRM: GET /api/v1/persona/avatar.vrm — the persona folder's
// avatar.vrm (a glTF binary), with ranges and If-Modified-Since.
func (s *Server) personaVRM(w http.ResponseWriter, r *http.Request) {
	var info PersonaInfo
	if s.o.Persona != nil {
		info = s.o.Persona()
	}
	if info.Dir == "" {
		writeError(w, http.StatusNotFound, "not_found", "this persona has no "+VRMFile)
		return
	}
	root, err := os.OpenRoot(info.Dir)
	if err != nil {
		writeError(w, http.StatusNotFound, "not_found", "this persona has no "+VRMFile)
		return
	}
	defer root.Close()
	f, err := root.Open(VRMFile)
	if err != nil {
		writeError(w, http.StatusNotFound, "not_found", "this persona has no "+VRMFile+" (put one in its folder or use cyan persona import --avatar FILE)")
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		writeError(w, http.StatusNotFound, "not_found", "this persona has no "+VRMFile)
		return
	}
	w.Header().Set("Content-Type", "model/gltf-binary")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Content-Security-Policy", "sandbox; default-src 'none'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	http.ServeContent(w, r, VRMFile, st.ModTime(), f)
}
