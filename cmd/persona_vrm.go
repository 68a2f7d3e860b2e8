package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cyan-agent/cyan/persona/card"
	"github.com/cyan-agent/cyan/persona/vrm"
)

// addVRM reads the VRM model file (cyan persona import --avatar FILE) and
// puts it into the folder as avatar.vrm, the body the page shows; it says
// what the model is. Nothing is written when the file is not a VRM.
func addVRM(f *card.Folder, file string) (string, error) {
	if file == "" {
		return "", nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return "", badInput("--avatar: %w (check the path)", err)
	}
	info, err := vrm.Read(data)
	if err != nil {
		return "", badInput("--avatar %s: %w", file, err)
	}
	f.Files[vrm.FileName] = data
	return info.String(), nil
}

// avatarInUse names what the page shows for the persona folder dir: its
// avatar.vrm (with what the model is), its pictures, or the drawn face. A
// avatar.vrm that is not a VRM model is an error: the page would fall
// back to the pictures or the drawn face.
func avatarInUse(dir string) (string, error) {
	if dir == "" {
		return "avatar: the drawn face", nil
	}
	data, err := os.ReadFile(filepath.Join(dir, vrm.FileName))
	if err == nil {
		info, err := vrm.Read(data)
		if err != nil {
			return "", fmt.Errorf("%s: %w", filepath.Join(dir, vrm.FileName), err)
		}
		return fmt.Sprintf("avatar: %s (%s, %d KB)", vrm.FileName, info, (len(data)+1023)/1024), nil
	}
	var pics []string
	entries, _ := os.ReadDir(filepath.Join(dir, "avatar"))
	for _, e := range entries {
		if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
			pics = append(pics, e.Name())
		}
	}
	switch {
	case len(pics) > 0:
		return fmt.Sprintf("avatar: %d picture(s) in avatar/", len(pics)), nil
	default:
		if _, err := os.Stat(filepath.Join(dir, card.AvatarFile)); err == nil {
			return "avatar: " + card.AvatarFile, nil
		}
	}
	return "avatar: the drawn face", nil
}
