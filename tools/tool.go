package tools

import (
	"context"
	"encoding/json"
	"regexp"

	"github.com/cyan-agent/cyan/packets"
)

// AllEffects lists every effect a tool may declare (packets.EffectRead
// …). They drive the default permission objects: a speaker who is not an
// owner gets no tool with any of read, write, execute, network, operate or
// self_edit unless a rule says otherwise. A tool with no effects (speak)
// or only memory is harmless.
var AllEffects = []string{packets.EffectRead, packets.EffectWrite, packets.EffectExecute, packets.EffectNetwork, packets.EffectOperate, packets.EffectSelfEdit, packets.EffectMemory}

// Sources of tools, as `cyan tool ls` shows them.
const (
	SourceBuiltin  = "builtin"
	SourceDefault  = "extra/default"
	SourceProvided = "extra/provided"
	SourceCustom   = "extra/custom"
	SourceMCP      = "mcp" // "mcp:<server>"
)

// entry is a registered tool: as its part exported it, with the
// nl_packet's fields the registry added to a natural tool's parameters
// (packet.go).
type entry struct {
	packets.Tool
	packetParams []string
}

// registryKey carries the registry into a call's context, for the tools of
// this package that run other tools (system_operation's steps).
type registryKey struct{}

// registryOf returns the registry running a call ctx belongs to, or nil.
func registryOf(ctx context.Context) *Registry {
	r, _ := ctx.Value(registryKey{}).(*Registry)
	return r
}

var validName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]{0,63}$`)

// ValidName reports whether s can name a tool: a letter, then up to 63
// letters, digits, "_", "." or "-".
func ValidName(s string) bool { return validName.MatchString(s) }

// Schema builds a JSON Schema object from (name, type, description)
// triples; every parameter is required unless its name ends in "?".
func Schema(params ...string) json.RawMessage {
	props := map[string]any{}
	required := []string{}
	for i := 0; i+2 < len(params); i += 3 {
		name, typ, desc := params[i], params[i+1], params[i+2]
		if n, ok := cutSuffix(name, "?"); ok {
			name = n
		} else {
			required = append(required, name)
		}
		props[name] = map[string]any{"type": typ, "description": desc}
	}
	b, _ := json.Marshal(map[string]any{"type": "object", "properties": props, "required": required})
	return b
}

func cutSuffix(s, suffix string) (string, bool) {
	if len(s) >= len(suffix) && s[len(s)-len(suffix):] == suffix {
		return s[:len(s)-len(suffix)], true
	}
	return s, false
}
