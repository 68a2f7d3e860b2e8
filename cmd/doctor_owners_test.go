package cmd

import (
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/bridge"
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
		{"default local", "127.0.0.1:7788", []string{"local"}, nil, false, "the owner is local (the terminal, the page"},
		{"localhost", "localhost:7788", nil, nil, false, "private messages without a chat-app id"},
		{"ipv6 loopback", "[::1]:7788", nil, nil, false, "fine while"},
		{"every interface", "0.0.0.0:7788", nil, nil, true, "whoever holds the token and writes in a private channel is the owner"},
		{"a LAN address", "192.168.1.20:7788", []string{"local"}, nil, true, "beyond this machine"},
		{"a bridge", "127.0.0.1:7788", []string{"local"}, []string{"qq"}, true, "bridges are configured (qq): your own chat accounts are strangers"},
		{"ids without local", "127.0.0.1:7788", []string{"id:qq:12345678"}, []string{"qq"}, true, "the terminal and the page are not the owner"},
		{"a name without local", "0.0.0.0:7788", []string{"id:qq:12345678", "hareru"}, []string{"qq"}, true, "send no name unless you give one"},
		{"owners set", "0.0.0.0:7788", []string{"local", "id:qq:12345678", "hareru"}, []string{"qq"}, true, "the owner is local (the terminal, the page, your API calls: private messages without a chat-app id); hareru (by name"},
		{"owners set on loopback", "127.0.0.1:7788", []string{"local", "id:qq:12345678", "hareru"}, []string{"qq"}, false, "id:qq:12345678"},
		{"the README's", "127.0.0.1:7788", []string{"local", "id:qq:12345678", "id:tg:987654"}, []string{"qq", "tg"}, false, "the owner is local (the terminal, the page, your API calls: private messages without a chat-app id); id:qq:12345678, id:tg:987654"},
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
			if tt.warn && (!strings.Contains(c.fix, "permissions.owners") || !strings.Contains(c.fix, "<your user id>") || !strings.Contains(c.fix, "cyan bridges who")) {
				t.Fatalf("the fix does not say how to name the owner: %q", c.fix)
			}
		})
	}
}

// The doctor lists each owner id with the account it last matched, or
// "never seen", and warns of an id nobody matched or one with no bridge.
func TestDoctorListsOwnerIDsSeen(t *testing.T) {
	cfg := config.Defaults()
	cfg.Permissions.Owners = []string{"local", "id:qq:1001", "id:tg:4242"}
	at := time.Date(2026, 11, 28, 10, 30, 0, 0, time.Local)
	seen := map[string]bridge.Writer{"id:qq:1001": {ID: "1001", Name: "晴", Last: at, Line: "id:qq:1001"}}
	c := checkOwnerIDs(&cfg, seen, true, "")
	if !c.warn || !strings.Contains(c.msg, "id:qq:1001: 晴, last 2026-11-28 10:30") || !strings.Contains(c.msg, "id:tg:4242: never seen") || !strings.Contains(c.fix, "cyan bridges who") {
		t.Fatalf("%+v", c)
	}
	seen["id:tg:4242"] = bridge.Writer{ID: "4242", Username: "hareru", Last: at, Line: "id:tg:4242"}
	if c := checkOwnerIDs(&cfg, seen, true, ""); c.warn || !strings.Contains(c.msg, "id:tg:4242: @hareru, last") {
		t.Fatalf("%+v", c)
	}
	if c := checkOwnerIDs(&cfg, nil, false, "the daemon is not running"); c.warn || !strings.Contains(c.msg, "id:qq:1001: not known (the daemon is not running)") {
		t.Fatalf("%+v", c)
	}
	cfg.Permissions.Owners = []string{"local", "id:qq2"}
	if c := checkOwnerIDs(&cfg, seen, true, ""); !c.warn || !strings.Contains(c.msg, `"id:qq2" names no bridge and no user id apart`) {
		t.Fatalf("%+v", c)
	}
}
