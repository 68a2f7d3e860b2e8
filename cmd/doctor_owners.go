package cmd

import (
	"fmt"
	"net"
	"strings"

	"github.com/cyan-agent/cyan/config"
)

// checkOwners says who the owner is. The rule (tools.Owners): an entry
// id:<bridge>:<user id> of permissions.owners is that account anywhere; a
// bare name only a private message that carries no platform id (the
// terminal, the page, the owner's API calls); with no entries, every
// private message without a platform id is the owner's. That is right for
// one person on a laptop, where only that person reaches the API. Once the
// API listens beyond loopback, whoever holds the token and writes in a
// private channel is the owner; once a bridge is configured, the owner's
// own chat accounts are strangers until they are listed. Both warn.
// bridges names the configured bridges.
func checkOwners(cfg *config.Config, bridges []string) check {
	c := check{name: "owner", ok: true}
	if len(cfg.Permissions.Owners) > 0 {
		c.msg = "the owner is " + strings.Join(cfg.Permissions.Owners, ", ") + " (permissions.owners; a bare name counts only in private chats without a platform id)"
		return c
	}
	c.msg = "no permissions.owners: every private message without a platform id (terminal, page, API) is the owner's"
	var why []string
	if !loopback(cfg.Addr) {
		why = append(why, fmt.Sprintf("the API listens on %s, beyond this machine: whoever holds the token and writes in a private channel is the owner", cfg.Addr))
	}
	if len(bridges) > 0 {
		why = append(why, fmt.Sprintf("bridges are configured (%s): your own chat accounts are strangers there until you list them", strings.Join(bridges, ", ")))
	}
	if len(why) == 0 {
		c.msg += "; fine while only this machine reaches the API"
		return c
	}
	c.warn = true
	c.msg += "; but " + strings.Join(why, "; and ")
	c.fix = "name the owner in the config: permissions.owners: [\"id:<bridge>:<your user id>\", <your name>] " +
		"(e.g. id:qq:12345678 for your QQ account; a bare name matches only private chats without a platform id)"
	return c
}

// loopback reports whether addr (host:port) listens on this machine only.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
