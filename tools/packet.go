package tools

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/cyan-agent/cyan/packets"
)

// The nl_packet is a natural tool's interface (SPEC §5): besides its aim
// (the tool's AimParam, such as "text"), the model may pass the packet's
// other fields as parameters of any natural tool. The registry adds them
// to the tool's schema (unless the tool declares a parameter of that name
// itself), takes them out of the arguments before the tool runs, checks
// them with the packet's own rules (packets.DecodeNatural: one string for
// scene, at most MaxFiles files, limits of -1 or more), clips the result
// to the limits, and hands the packet to the tool as Call.Natural and to
// the traces of its model calls (llm.WithPacket).

// packetProps are the packet's fields as parameters a natural tool takes.
var packetProps = []struct{ name, schema string }{
	{"scene", `{"type": "string", "description": "optional: the situation that explains the request, in a sentence or two"}`},
	{"appendix", `{"type": "array", "items": {"type": "string"}, "description": "optional: files the request refers to, as %[path] references or paths"}`},
	{"output_text_limit", `{"type": "integer", "minimum": -1, "description": "optional: the most characters of text the result may have (-1: no limit)"}`},
	{"output_file_limit", `{"type": "array", "items": {"type": "string"}, "description": "optional: the names of the files you want back, in order"}`},
}

// withPacketFields adds the packet's fields a natural tool's schema lacks,
// and remembers which it added. Other tools are returned as they are.
func withPacketFields(tool packets.Tool) entry {
	t := entry{Tool: tool}
	if t.Kind != packets.ToolNatural {
		return t
	}
	schema := map[string]any{"type": "object"}
	if len(t.Parameters) > 0 {
		if err := json.Unmarshal(t.Parameters, &schema); err != nil {
			return t // checkTool has refused such a schema already
		}
	}
	props, _ := schema["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	t.packetParams = nil
	for _, p := range packetProps {
		if _, own := props[p.name]; own || p.name == t.AimParam {
			continue
		}
		props[p.name] = json.RawMessage(p.schema)
		t.packetParams = append(t.packetParams, p.name)
	}
	schema["properties"] = props
	b, err := json.Marshal(schema)
	if err != nil {
		return t
	}
	t.Parameters = b
	return t
}

// naturalOf builds a natural tool's request packet from its arguments and
// returns the arguments the tool itself takes (the packet's fields the
// registry added are taken out):
//
//   - arguments that hold "aim" (and the tool's aim is another parameter)
//     are a whole packet, decoded strictly;
//   - otherwise the aim is the aim parameter (else the arguments as
//     text), and scene, appendix and the limits are the parameters of
//     those names the registry added to the schema.
func naturalOf(t entry, args json.RawMessage) (packets.Natural, json.RawMessage, error) {
	var probe map[string]json.RawMessage
	_ = json.Unmarshal(args, &probe)
	if _, ok := probe["aim"]; ok && t.AimParam != "aim" {
		n, err := packets.DecodeNatural(args)
		return n, args, err
	}
	packet := map[string]json.RawMessage{}
	if t.AimParam != "" {
		if raw, ok := probe[t.AimParam]; ok {
			var aim string
			if err := json.Unmarshal(raw, &aim); err != nil {
				return packets.Natural{}, nil, fmt.Errorf("%s: %s must be a string", t.Name, t.AimParam)
			}
			packet["aim"] = raw
		}
	}
	if _, ok := packet["aim"]; !ok {
		packet["aim"], _ = json.Marshal(string(args))
	}
	own := args
	if len(t.packetParams) > 0 {
		rest := map[string]json.RawMessage{}
		for k, v := range probe {
			if slices.Contains(t.packetParams, k) {
				packet[k] = v
				continue
			}
			rest[k] = v
		}
		if len(rest) != len(probe) {
			own, _ = json.Marshal(rest)
		}
	}
	b, err := json.Marshal(packet)
	if err != nil {
		return packets.Natural{}, nil, err
	}
	n, err := packets.DecodeNatural(b)
	if err != nil {
		return packets.Natural{}, nil, fmt.Errorf("%s: %w", t.Name, err)
	}
	if len(n.Appendix) > packets.MaxFiles {
		return packets.Natural{}, nil, fmt.Errorf("%s: appendix names %d files; at most %d", t.Name, len(n.Appendix), packets.MaxFiles)
	}
	if n.Appendix == nil {
		n.Appendix = []string{}
	}
	if n.OutputFileLimit == nil {
		n.OutputFileLimit = []string{}
	}
	return n, own, nil
}

// packetInputs adds the packet's scene, appendix and text limit to a
// script's inputs (packets.Natural.StepInputs).
func packetInputs(n *packets.Natural, in map[string]any) map[string]any { return n.StepInputs(in) }
