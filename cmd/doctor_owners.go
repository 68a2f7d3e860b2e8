package cmd

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/tools"
)

// checkOwners says who the owner is. The rule (tools.Owners): "local"
// (listed by default) is every private message without a platform id —
// the terminal, the page, the owner's API calls; an entry
// id:<bridge>:<user id> is that chat account anywhere; a bare name only a
// private message without a platform id that gives it. Local is right for
// one person on a laptop, where only that person reaches the API. Once the
// API listens beyond loopback, whoever holds the token and writes in a
// private channel is the owner; once a bridge is configured, the owner's
// own chat accounts are strangers until they are listed (`cyan bridges
// who` gives the lines); with neither local nor a name, the terminal and
// the page are strangers. Each warns. bridges names the configured
// bridges.
func checkOwners(cfg *config.Config, bridges []string) check {
	c := check{name: "owner", ok: true}
	owners := cfg.Permissions.Owners
	local := len(owners) == 0 || slices.Contains(owners, tools.LocalOwner)
	var ids, names []string
	for _, o := range owners {
		switch {
		case o == tools.LocalOwner:
		case strings.HasPrefix(o, "id:"):
			ids = append(ids, o)
		default:
			names = append(names, o)
		}
	}
	var who []string
	if local {
		who = append(who, "local (the terminal, the page, your API calls: private messages without a chat-app id)")
	}
	if len(names) > 0 {
		who = append(who, strings.Join(names, ", ")+" (by name, only in private messages without a chat-app id)")
	}
	if len(ids) > 0 {
		who = append(who, strings.Join(ids, ", "))
	}
	if len(who) == 0 {
		who = append(who, "nobody")
	}
	c.msg = "the owner is " + strings.Join(who, "; ")
	var why []string
	if local && !config.Loopback(cfg.Addr) {
		why = append(why, fmt.Sprintf("the API listens on %s, beyond this machine: whoever holds the token and writes in a private channel is the owner", cfg.Addr))
	}
	if len(bridges) > 0 && len(ids) == 0 {
		why = append(why, fmt.Sprintf("bridges are configured (%s): your own chat accounts are strangers there until you list them", strings.Join(bridges, ", ")))
	}
	switch {
	case !local && len(names) == 0:
		why = append(why, "the terminal and the page are not the owner (they send no chat-app id): add local to have them")
	case !local:
		why = append(why, "the terminal and the page send no name unless you give one (--user, ?user=), so by name they are the owner only then: add local to have them always")
	}
	if len(why) == 0 {
		if local && len(ids) == 0 {
			c.msg += "; fine while only this machine reaches the API"
		}
		return c
	}
	c.warn = true
	c.msg += "; but " + strings.Join(why, "; and ")
	example := "id:<bridge>:<your user id>"
	if len(bridges) > 0 {
		example = "id:" + bridges[0] + ":<your user id>"
	}
	c.fix = fmt.Sprintf("name the owner in the config: permissions.owners: [local, %q] (id:<bridge>:<your user id>; `cyan bridges who` lists who wrote to the bot privately, with the line to add)", example)
	return c
}
