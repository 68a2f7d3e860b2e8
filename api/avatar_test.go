package api

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAvatarsByEmotion: a persona's avatar/ folder is read by cyan's
// emotions: a SillyTavern sprite pack's names (joy, sadness, anger, fear,
// love…) map by persona.EmotionOf's table, an exact emotion name wins over
// a mapped one, and a card imported before avatar/ shows its avatar.png as
// the neutral face.
func TestAvatarsByEmotion(t *testing.T) {
	dir := t.TempDir()
	av := filepath.Join(dir, AvatarFolder)
	os.MkdirAll(av, 0o755)
	for _, f := range []string{"joy.png", "amusement.png", "sadness.png", "anger.png", "fear.png", "love.png", "curiosity.png", "excitement.png", "happy.webp", "portrait.png", ".hidden.png", "notes.txt"} {
		os.WriteFile(filepath.Join(av, f), []byte("x"), 0o644)
	}
	got := avatarsOf(dir)
	want := map[string]string{
		"happy": "happy.webp", "sad": "sadness.png", "angry": "anger.png", "surprised": "fear.png", "gentle": "love.png",
		"ask": "curiosity.png", "excited": "excitement.png", "portrait": "portrait.png",
	}
	if len(got) != len(want) {
		t.Errorf("avatars %v, want %v", got, want)
	}
	for e, f := range want {
		if got[e] != "/api/v1/persona/avatar/"+f {
			t.Errorf("%s: %q, want %s", e, got[e], f)
		}
	}
	// Without happy.webp, joy (the table's first for happy) beats amusement.
	os.Remove(filepath.Join(av, "happy.webp"))
	if got := avatarsOf(dir); got["happy"] != "/api/v1/persona/avatar/joy.png" {
		t.Errorf("happy: %q", got["happy"])
	}
	// A folder from an older import: avatar.png beside persona.md.
	old := t.TempDir()
	os.WriteFile(filepath.Join(old, "avatar.png"), []byte("png"), 0o644)
	if got := avatarsOf(old); got["neutral"] != "/api/v1/persona/avatar/avatar.png" {
		t.Fatalf("legacy: %v", got)
	}
	if b, err := readAvatar(old, "avatar.png"); err != nil || string(b) != "png" {
		t.Errorf("legacy read: %q %v", b, err)
	}
	if _, err := readAvatar(old, "../avatar.png"); err == nil {
		t.Error("read outside the folder")
	}
}
