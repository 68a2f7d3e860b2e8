package cmd

import (
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/config"
)

func TestDoctorExplainsTheOwner(t *testing.T) {
	tests := []struct {
		name    string
		addr    string
		owners  []string
		bridges []string
		warn    bool
		want    string
	}{
		{"laptop", "127.0.0.1:7788", nil, nil, false, "fine while only this machine reaches the API"},
		{"localhost", "localhost:7788", nil, nil, false, "every private message without a platform id"},
		{"ipv6 loopback", "[::1]:7788", nil, nil, false, "fine while"},
		{"every interface", "0.0.0.0:7788", nil, nil, true, "whoever holds the token and writes in a private channel is the owner"},
		{"a LAN address", "192.168.1.20:7788", nil, nil, true, "beyond this machine"},
		{"a bridge", "127.0.0.1:7788", nil, []string{"qq"}, true, "bridges are configured (qq): your own chat accounts are strangers"},
		{"owners set", "0.0.0.0:7788", []string{"id:qq:12345678", "hareru"}, []string{"qq"}, false, "the owner is id:qq:12345678, hareru"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.Defaults()
			cfg.Addr = tt.addr
			cfg.Permissions.Owners = tt.owners
			c := checkOwners(&cfg, tt.bridges)
			if c.warn != tt.warn || !c.ok || !strings.Contains(c.msg, tt.want) {
				t.Fatalf("%+v", c)
			}
			if tt.warn && (!strings.Contains(c.fix, "permissions.owners") || !strings.Contains(c.fix, "id:<bridge>:<your user id>")) {
				t.Fatalf("the fix does not say how to name the owner: %q", c.fix)
			}
		})
	}
}
