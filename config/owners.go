package config

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// readmeOwners are the sample owner ids the README printed before it
// printed placeholders: copied as they were, they named strangers' accounts
// as the owner.
var readmeOwners = []string{"id:qq:12345678", "id:tg:987654321"}

// ownerPlaceholder finds a placeholder of the docs left in an owner entry
// ("id:qq:<your QQ number>").
var ownerPlaceholder = regexp.MustCompile(`[<>]|\byour\b`)

// CheckOwner checks one permissions.owners entry on its own: an entry
// that could never mean the owner — empty, an "id:" with nothing after it
// or with no user id after its bridge ("id:qq:"), a placeholder of the docs
// left in ("id:qq:<your QQ number>"), or the README's old sample ids — is
// an error that says what to write. tools.ParseOwners and the config's
// validation both use it; the config also checks the bridge names
// (checkOwners).
func CheckOwner(entry string) error {
	e := strings.TrimSpace(entry)
	rest, isID := strings.CutPrefix(e, "id:")
	switch {
	case e == "":
		return fmt.Errorf("empty; write local, id:<bridge>:<user id> or a name")
	case ownerPlaceholder.MatchString(e):
		return fmt.Errorf("%q is the docs' placeholder, not an account: put your own user id in its place (id:qq:12345, digits only; `cyan bridges who` lists who wrote to the bot privately, with the line to copy)", entry)
	case slices.Contains(readmeOwners, e):
		return fmt.Errorf("%q is one of the README's examples, not your account: put your own user id in its place (`cyan bridges who` lists who wrote to the bot privately, with the line to copy)", entry)
	case !isID:
		return nil
	case rest == "":
		return fmt.Errorf("%q names no account: write id:<bridge>:<user id>, e.g. id:qq:12345", entry)
	}
	if bridge, user, ok := strings.Cut(rest, ":"); ok && strings.TrimSpace(user) == "" {
		return fmt.Errorf("%q names no user id after the bridge %q: write id:%s:<user id>", entry, bridge, bridge)
	}
	return nil
}

// checkOwners checks permissions.owners against the configured bridges:
// each entry on its own (CheckOwner), then an id's bridge, which must be
// configured, and its user id, which must be there after a bridge's name
// ("id:qq" with a bridge named qq). An id with no bridge part ("id:qq2",
// "id:1001") matches no chat account: it is warned of (OwnerWarnings),
// since a caller of the API may still claim it.
func (c *Config) checkOwners(bad func(key, format string, args ...any)) {
	bridges := c.Bridges.Names()
	known := "no bridge is configured (" + platformSections() + ")"
	if len(bridges) > 0 {
		known = "the bridges are named " + strings.Join(bridges, ", ")
	}
	for i, o := range c.Permissions.Owners {
		if err := CheckOwner(o); err != nil {
			bad("permissions.owners", "entry %d: %v", i, err)
			continue
		}
		rest, isID := strings.CutPrefix(strings.TrimSpace(o), "id:")
		if !isID {
			continue
		}
		name, user, ok := strings.Cut(rest, ":")
		switch {
		case !ok && slices.Contains(bridges, rest):
			bad("permissions.owners", "%q names no user id, so it would never match anyone: write id:<bridge>:<user id> (%s; e.g. id:%s:<user id>)", o, known, rest)
		case !ok:
		case !slices.Contains(bridges, name):
			if len(bridges) > 0 {
				known += fmt.Sprintf(" (e.g. id:%s:%s)", bridges[0], user)
			}
			bad("permissions.owners", "%q names no bridge %q, so it would never match anyone; %s", o, name, known)
		}
	}
}

// OwnerWarnings are what `cyan config check` and `cyan doctor` warn of in
// permissions.owners: an id with no bridge part ("id:qq2", "id:1001"),
// which no chat account's id matches (a speaker is <bridge>:<user id>).
func (c *Config) OwnerWarnings() []string {
	bridges := c.Bridges.Names()
	known := "no bridge is configured"
	example := "id:<bridge>:<user id>"
	if len(bridges) > 0 {
		known = "the bridges are named " + strings.Join(bridges, ", ")
	}
	var out []string
	for _, o := range c.Permissions.Owners {
		rest, isID := strings.CutPrefix(strings.TrimSpace(o), "id:")
		if !isID || rest == "" || strings.Contains(rest, ":") || slices.Contains(bridges, rest) {
			continue
		}
		if len(bridges) > 0 {
			example = "id:" + bridges[0] + ":" + rest
		}
		out = append(out, fmt.Sprintf("permissions.owners: %q names no bridge and no user id apart, so no chat account matches it (a speaker is <bridge>:<user id>); %s: write e.g. %s", o, known, example))
	}
	return out
}
