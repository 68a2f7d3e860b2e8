package api

import (
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// PersonaInfo is what the page shows of the persona.
type PersonaInfo struct {
	Name  string
	Color string
	// Dir is the persona folder ("" for the built-in one); its avatar/
	// folder may hold an image per emotion (happy.png, sad.svg, …, and
	// neutral.* for the rest).
	Dir string
}

// AvatarFolder is the folder of a persona that holds its avatar images.
const AvatarFolder = "avatar"

var avatarTypes = map[string]string{".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
	".webp": "image/webp", ".gif": "image/gif", ".svg": "image/svg+xml"}

// personaInfo: GET /api/v1/persona[?channel=C] → {name, color, avatars:
// {emotion: url}, voiced}: voiced says whether C's replies are spoken.
func (s *Server) personaInfo(w http.ResponseWriter, r *http.Request) {
	info := PersonaInfo{Name: "cyan", Color: "#1D75B3"}
	if s.o.Persona != nil {
		info = s.o.Persona()
	}
	avatars := map[string]string{}
	if info.Dir != "" {
		entries, _ := os.ReadDir(filepath.Join(info.Dir, AvatarFolder))
		for _, e := range entries {
			ext := strings.ToLower(path.Ext(e.Name()))
			if e.Type().IsRegular() && avatarTypes[ext] != "" {
				avatars[strings.ToLower(strings.TrimSuffix(e.Name(), path.Ext(e.Name())))] = "/api/v1/persona/avatar/" + e.Name()
			}
		}
	}
	ch := r.URL.Query().Get("channel")
	voiced := s.o.Voice != nil && ch != "" && s.o.Voice.Voiced(ch)
	writeJSON(w, http.StatusOK, map[string]any{"name": info.Name, "color": info.Color, "avatars": avatars, "voiced": voiced})
}

// personaAvatar: GET /api/v1/persona/avatar/{file} — an image of the
// persona's avatar folder (nothing outside it).
func (s *Server) personaAvatar(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	typ := avatarTypes[strings.ToLower(path.Ext(name))]
	var info PersonaInfo
	if s.o.Persona != nil {
		info = s.o.Persona()
	}
	if info.Dir == "" || typ == "" || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
		writeError(w, http.StatusNotFound, "not_found", "no such avatar image")
		return
	}
	root, err := os.OpenRoot(filepath.Join(info.Dir, AvatarFolder))
	if err != nil {
		writeError(w, http.StatusNotFound, "not_found", "the persona has no avatar folder")
		return
	}
	defer root.Close()
	data, err := fs.ReadFile(root.FS(), name)
	if errors.Is(err, fs.ErrNotExist) || err != nil {
		writeError(w, http.StatusNotFound, "not_found", "no such avatar image")
		return
	}
	w.Header().Set("Content-Type", typ)
	w.Header().Set("Content-Security-Policy", "sandbox; default-src 'none'; style-src 'unsafe-inline'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(data)
}
