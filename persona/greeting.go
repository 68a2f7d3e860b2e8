package persona

import (
	"fmt"
	"hash/fnv"
	"maps"
	"strings"
)

// Greeting returns what the persona says first when a new conversation
// opens, "" when it has nothing to say. It reads the variables a character
// card brings (any persona may set them):
//
//	first_mes             the greeting of a private conversation
//	alternate_greetings   other greetings, a list
//	group_only_greetings  greetings of a group conversation, a list
//	greeting_pick         "first" (default): first_mes, or the first group
//	                      greeting; "any": one of them all, chosen by the
//	                      channel's name (the same channel, the same one)
//
// A group conversation opens only when group_only_greetings has one. The
// greeting is template text, rendered with the persona's variables, user
// (who opened the conversation) and channel.
func (p *Persona) Greeting(channel string, group bool, user string) (string, error) {
	var options []string
	name := "first_mes"
	if group {
		name = "group_only_greetings"
		options = texts(p.Vars[name])
	} else {
		if s, ok := p.Vars["first_mes"].(string); ok && strings.TrimSpace(s) != "" {
			options = append(options, s)
		}
		if len(options) == 0 || pick(p.Vars) == "any" {
			alt := texts(p.Vars["alternate_greetings"])
			if len(options) == 0 && len(alt) > 0 {
				name = "alternate_greetings"
			}
			options = append(options, alt...)
		}
	}
	if len(options) == 0 {
		return "", nil
	}
	choice := 0
	if pick(p.Vars) == "any" {
		h := fnv.New32a()
		h.Write([]byte(channel))
		choice = int(h.Sum32() % uint32(len(options)))
	}
	t, err := Parse(fmt.Sprintf("%s (variables.%s)", FileName, name), options[choice])
	if err != nil {
		return "", err
	}
	vars := maps.Clone(p.Vars)
	vars["user"], vars["channel"] = user, channel
	out, err := t.Render(vars)
	return strings.TrimSpace(out), err
}

func pick(vars map[string]any) string {
	s, _ := vars["greeting_pick"].(string)
	return strings.ToLower(strings.TrimSpace(s))
}

// texts reads a variable that holds a list of texts (or one text).
func texts(v any) []string {
	var out []string
	add := func(s string) {
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	switch x := v.(type) {
	case string:
		add(x)
	case []string:
		for _, s := range x {
			add(s)
		}
	case []any:
		for _, e := range x {
			if s, ok := e.(string); ok {
				add(s)
			}
		}
	}
	return out
}
