package api

import "testing"

// TestPersonaNamesThePageChannel: GET /api/v1/persona names the page's
// channel of the persona (persona.PageChannelFor) and the daemon's config
// file: desktop for the built-in persona, desktop:<id> for another.
func TestPersonaNamesThePageChannel(t *testing.T) {
	info := PersonaInfo{Name: "青蓝", Color: "#1D75B3"}
	r := newRig(t, func(o *Options) {
		o.Persona = func() PersonaInfo { return info }
		o.ConfigFile = "/etc/cyan/cyan.yaml"
	})
	code, body := r.do(t, "GET", "/api/v1/persona", "")
	if code != 200 || body["channel"] != "desktop" || body["id"] != "" || body["config_file"] != "/etc/cyan/cyan.yaml" || body["voiced"] != false {
		t.Fatalf("built-in: %d %v", code, body)
	}
	info = PersonaInfo{Name: "Seraphina", Color: "#000000", ID: "Seraphina"}
	code, body = r.do(t, "GET", "/api/v1/persona?channel=desktop", "")
	if code != 200 || body["channel"] != "desktop:Seraphina" || body["id"] != "Seraphina" || body["name"] != "Seraphina" {
		t.Fatalf("a card's persona: %d %v", code, body)
	}
}
