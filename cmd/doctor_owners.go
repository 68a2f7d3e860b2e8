package cmd

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cyan-agent/cyan/api"
	"github.com/cyan-agent/cyan/bridge"
	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/store"
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

// checkOwnerIDs lists each id: entry of permissions.owners with the
// account it last matched in a private message to a bot (the bridges' who
// logs, `cyan bridges who`), or "never seen": a typo or a stranger's sample
// id shows as an owner that never wrote. seen maps an owners line
// (id:<bridge>:<user id>) to its writer; known is false when the daemon
// could not be asked (why says why). An id with no bridge part warns
// (config.OwnerWarnings).
func checkOwnerIDs(cfg *config.Config, seen map[string]bridge.Writer, known bool, why string) check {
	c := check{name: "owner ids", ok: true}
	var lines []string
	never := 0
	for _, o := range cfg.Permissions.Owners {
		if !strings.HasPrefix(strings.TrimSpace(o), "id:") {
			continue
		}
		o = strings.TrimSpace(o)
		w, ok := seen[o]
		switch {
		case !known:
			lines = append(lines, o+": not known ("+why+")")
		case !ok:
			never++
			lines = append(lines, o+": never seen")
		default:
			name := strings.TrimSpace(w.Name + " @" + w.Username)
			name = strings.TrimSuffix(name, " @")
			if name == "" || name == "@" {
				name = "no name"
			}
			lines = append(lines, fmt.Sprintf("%s: %s, last %s", o, name, w.Last.Local().Format("2006-01-02 15:04")))
		}
	}
	if len(lines) == 0 {
		c.msg = "no owner is named by a chat-app id"
		return c
	}
	c.msg = strings.Join(lines, "; ")
	warnings := cfg.OwnerWarnings()
	if never > 0 || len(warnings) > 0 {
		c.warn = true
		if len(warnings) > 0 {
			c.msg += "; " + strings.Join(warnings, "; ")
		}
		c.fix = "write to each bot privately from your own account and run `cyan bridges who`: it prints the permissions.owners line of each account that did; an id never seen may be a typo or someone else's"
	}
	return c
}

// ownerSightings asks the running daemon who wrote to its bots privately,
// by owners line; known is false (why says why) when it cannot be asked.
func ownerSightings(cfg *config.Config) (seen map[string]bridge.Writer, known bool, why string) {
	if _, held, _ := store.Holder(cfg.DataDir); !held {
		return nil, false, "the daemon is not running; start it and run cyan doctor again"
	}
	var out api.BridgeList
	if err := newClient(cfg).do("GET", "/api/v1/bridges", nil, &out); err != nil {
		return nil, false, "the daemon did not answer: " + err.Error()
	}
	seen = map[string]bridge.Writer{}
	for _, b := range out.Bridges {
		for _, w := range b.Writers {
			if prev, ok := seen[w.Line]; !ok || w.Last.After(prev.Last) {
				seen[w.Line] = w
			}
		}
	}
	return seen, true, ""
}
