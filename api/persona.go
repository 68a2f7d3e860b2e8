package api

import (
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/cyan-agent/cyan/persona"
	"github.com/cyan-agent/cyan/persona/vrm"
)

// PersonaInfo is what the page shows of the persona.
type PersonaInfo struct {
	Name  string
	Color string
	// Dir is the persona folder ("" for the built-in one); its avatar/
	// folder may hold an image per emotion (happy.png, sad.svg, …, and
	// neutral.* for the rest), named by cyan's emotions or by another
	// app's expressions (a SillyTavern sprite pack's joy.png, sadness.png,
	// …), which persona.EmotionOf maps. A folder imported from a card before
	// avatar/ was written has the card's picture as avatar.png beside
	// persona.md: it is the neutral face.
	Dir string
	// ID is the persona's ID (persona.Persona.ID: "" for the built-in):
	// it names the page's channel (persona.PageChannelFor).
	ID string
}

// AvatarFolder is the folder of a persona that holds its avatar images.
const AvatarFolder = "avatar"

var avatarTypes = map[string]string{".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
	".webp": "image/webp", ".gif": "image/gif", ".svg": "image/svg+xml"}

// personaInfo: GET /api/v1/persona[?channel=C] → {name, id, channel,
// color, avatars: {emotion: url}, voiced, actions, config_file}: channel is
// the page's channel with this persona (persona.PageChannelFor: "desktop"
// for the built-in one, "desktop:<id>" for another), the one the page
// opens unless it is given another; voiced says whether C's replies (or
// channel's, without C) are spoken, actions what their *actions* become
// (with a voice); config_file is the daemon's configuration file, the one
// `persona:` goes in.
func (s *Server) personaInfo(w http.ResponseWriter, r *http.Request) {
	info := PersonaInfo{Name: "cyan", Color: "#1D75B3"}
	if s.o.Persona != nil {
		info = s.o.Persona()
	}
	avatars := avatarsOf(info.Dir)
	page := persona.PageChannelFor(info.ID)
	ch := r.URL.Query().Get("channel")
	if ch == "" {
		ch = page
	}
	voiced := s.o.Voice != nil && s.o.Voice.Voiced(ch)
	out := map[string]any{"name": info.Name, "id": info.ID, "channel": page, "color": info.Color, "avatars": avatars, "voiced": voiced}
	if s.o.ConfigFile != "" {
		out["config_file"] = s.o.ConfigFile
	}
	if s.o.Voice != nil {
		out["actions"] = s.o.Voice.Actions()
	}
	if u := vrmURL(info.Dir); u != "" {
		out["vrm"] = u
		if t, err := vrm.ReadTable(info.Dir); err == nil && t != nil {
			out["vrm_expressions"] = t
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// legacyAvatar is the card's picture of a folder imported before avatar/.
const legacyAvatar = "avatar.png"

// avatarsOf lists a persona folder's avatar images by cyan's emotion: a
// file named after the emotion wins, then the expression that ranks first
// in persona.EmotionOf's table; files of no known emotion are listed under
// their own name.
func avatarsOf(dir string) map[string]string {
	avatars := map[string]string{}
	if dir == "" {
		return avatars
	}
	rank := map[string]int{}
	entries, _ := os.ReadDir(filepath.Join(dir, AvatarFolder))
	for _, e := range entries {
		ext := strings.ToLower(path.Ext(e.Name()))
		if !e.Type().IsRegular() || avatarTypes[ext] == "" || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		name := strings.ToLower(strings.TrimSuffix(e.Name(), path.Ext(e.Name())))
		url := "/api/v1/persona/avatar/" + e.Name()
		emotion, ok := persona.EmotionOf(name)
		if !ok {
			if _, taken := avatars[name]; !taken {
				avatars[name] = url
			}
			continue
		}
		r := persona.EmotionRank(name)
		if old, seen := rank[emotion]; seen && old <= r {
			continue
		}
		rank[emotion], avatars[emotion] = r, url
	}
	if _, ok := avatars["neutral"]; !ok {
		if st, err := os.Stat(filepath.Join(dir, legacyAvatar)); err == nil && st.Mode().IsRegular() {
			avatars["neutral"] = "/api/v1/persona/avatar/" + legacyAvatar
		}
	}
	return avatars
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
	data, err := readAvatar(info.Dir, name)
	if errors.Is(err, fs.ErrNotExist) || err != nil {
		writeError(w, http.StatusNotFound, "not_found", "no such avatar image")
		return
	}
	w.Header().Set("Content-Type", typ)
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Content-Security-Policy", "sandbox; default-src 'none'; style-src 'unsafe-inline'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(data)
}

// readAvatar reads an image of dir's avatar folder, or the legacy
// avatar.png beside persona.md when the folder has no image of that name.
func readAvatar(dir, name string) ([]byte, error) {
	root, err := os.OpenRoot(filepath.Join(dir, AvatarFolder))
	if err == nil {
		defer root.Close()
		data, err := fs.ReadFile(root.FS(), name)
		if err == nil || name != legacyAvatar {
			return data, err
		}
	} else if name != legacyAvatar {
		return nil, err
	}
	top, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer top.Close()
	return fs.ReadFile(top.FS(), legacyAvatar)
}
