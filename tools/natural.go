package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/tts"
)

// Scripts runs the prompt scripts natural tools think with: Call runs
// the script called name, CallFile a script file on disk (an extra tool's
// run: {script: file.ai.yaml}), whose manifest is checked with CheckFile
// when it loads; each run checks the structured inputs in
// against what the script declares and decodes its validated value into
// out. channel names the conversation in the traces. The daemon passes the
// script library (script.Library).
type Scripts interface {
	Call(ctx context.Context, name, channel string, in map[string]any, out any) error
	CallFile(ctx context.Context, file, channel string, in map[string]any, out any) error
	// CheckFile parses a script file without running it.
	CheckFile(file string) error
}

// The prompt scripts of the built-in natural tools (built in; a persona's
// scripts/ folder may override each).
const (
	ScriptSpeak           = "speak"
	ScriptSystemOperation = "system_operation"
)

// MaxSpeakRunes bounds speak's input: it is for a line or two, not essays.
const MaxSpeakRunes = 500

func speak(g Scripts) packets.Tool {
	return packets.Tool{ToolSpec: packets.ToolSpec{
		Name:  "speak",
		Title: "say something aloud",
		Description: `Turn a short text into speech for the voice: returns {"speech": [{"emotion", "language", "text"}]}. ` +
			`Keep the text short (a line or two). An output_text_limit counts the segments' words, and the result is always whole JSON.`,
		Parameters: Schema("text", "string", "what to say, short"),
		Kind:       packets.ToolNatural, AI: true, AimParam: "text", Effects: []string{}, // none: it only makes speech of text
	}, Run: func(ctx context.Context, c *packets.ToolCall) (packets.Result, error) {
		text := strings.TrimSpace(c.Natural.Aim)
		if text == "" {
			return packets.Result{}, errors.New("speak: the text is empty")
		}
		if n := len([]rune(text)); n > MaxSpeakRunes {
			return packets.Result{}, fmt.Errorf("speak: the text has %d characters; say at most %d at a time", n, MaxSpeakRunes)
		}
		segs := []packets.Segment{}
		var raw json.RawMessage
		err := g.Call(ctx, ScriptSpeak, c.Caller.Channel, packetInputs(c.Natural, map[string]any{"text": text}), &raw)
		if err == nil {
			segs, err = parseSpeech(raw)
		}
		if err != nil {
			if ctx.Err() != nil {
				return packets.Result{}, ctx.Err()
			}
			// The voice must still speak: one plain segment.
			segs = []packets.Segment{{Emotion: tts.DefaultEmotion, Language: tts.LanguageOf(text), Text: text}}
		}
		if c.Natural != nil && c.Natural.OutputTextLimit >= 0 {
			segs = fitSpeech(segs, c.Natural.TextLimit())
		}
		b, _ := json.Marshal(map[string]any{"speech": segs})
		return packets.Result{OutputText: string(b), Structured: true}, nil
	}}
}

// fitSpeech keeps speech within an output_text_limit of limit characters,
// counted over the segments' texts (the words the voice says, not the JSON
// around them): whole segments while they fit, the first cut to the limit
// when even it does not. The result stays a whole {"speech": […]}.
func fitSpeech(segs []packets.Segment, limit int) []packets.Segment {
	out := []packets.Segment{}
	used := 0
	for _, s := range segs {
		n := len([]rune(s.Text))
		if used+n > limit {
			if len(out) == 0 && limit > 0 {
				s.Text = packets.CutText(s.Text, limit)
				out = append(out, s)
			}
			break
		}
		out = append(out, s)
		used += n
	}
	return out
}

func parseSpeech(raw json.RawMessage) ([]packets.Segment, error) {
	var out struct {
		Speech []packets.Segment `json:"speech"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	var segs []packets.Segment
	for _, s := range out.Speech {
		s.Text = strings.TrimSpace(s.Text)
		if s.Text == "" {
			continue
		}
		segs = append(segs, tts.NormalizeSegment(s))
	}
	if len(segs) == 0 {
		return nil, errors.New("no speech segments")
	}
	return segs, nil
}

// Step is one concrete step of a system operation.
type Step struct {
	Tool    string `json:"tool"` // read_file, write_file or terminal
	Path    string `json:"path,omitempty"`
	Content string `json:"content,omitempty"`
	Command string `json:"command,omitempty"`
}

// MaxSteps bounds the steps of one system operation.
const MaxSteps = 16

func systemOperation(g Scripts) packets.Tool {
	return packets.Tool{ToolSpec: packets.ToolSpec{
		Name:  "system_operation",
		Title: "operate the computer",
		Description: "Do something on the computer, described in natural language with full paths " +
			"(\"convert /w/a.mp4 to /w/a.mp3, then write /w/readme.txt saying …\"). It is turned into file and terminal steps, " +
			"each held to the same permissions; steps that need the owner's approval wait for it together.",
		Parameters: Schema("command", "string", "what to do, with full paths"),
		Kind:       packets.ToolNatural, AI: true, AimParam: "command", Effects: []string{packets.EffectOperate},
	}, Run: func(ctx context.Context, c *packets.ToolCall) (packets.Result, error) {
		var args struct {
			Command string `json:"command"`
			Plan    []Step `json:"plan"`
		}
		_ = json.Unmarshal(c.Args, &args)
		steps, summary := args.Plan, ""
		if len(steps) == 0 {
			var plan struct {
				Steps   []Step `json:"steps"`
				Summary string `json:"summary"`
			}
			if err := g.Call(ctx, ScriptSystemOperation, c.Caller.Channel, packetInputs(c.Natural, map[string]any{"command": c.Natural.Aim}), &plan); err != nil {
				return packets.Result{}, fmt.Errorf("system_operation: could not plan the steps: %w", err)
			}
			steps, summary = plan.Steps, plan.Summary
		}
		if len(steps) == 0 {
			return packets.Result{OutputText: "nothing was done: " + orText(summary, "no steps were planned")}, nil
		}
		if len(steps) > MaxSteps {
			return packets.Result{}, fmt.Errorf("system_operation: %d steps planned; at most %d — split the request", len(steps), MaxSteps)
		}
		reg := registryOf(ctx)
		if reg == nil {
			return packets.Result{}, errors.New("system_operation runs only through the tool registry")
		}
		// Check every step first: a denied step stops the whole operation
		// before anything runs; steps that need approval park it whole.
		needsApproval := false
		for i, s := range steps {
			args, err := s.arguments()
			if err != nil {
				return packets.Result{}, fmt.Errorf("system_operation: step %d: %w", i+1, err)
			}
			switch v := reg.checkAs(c.Reader(), c.Caller, s.Tool, args); v.Decision {
			case packets.Deny:
				return packets.Result{OutputText: fmt.Sprintf("nothing was done: step %d (%s) is denied (rule %s)", i+1, s.describe(), v.Rule)}, nil
			case packets.Confirm:
				needsApproval = true
			}
		}
		if needsApproval && !c.Confirmed {
			planned, _ := json.Marshal(map[string]any{"command": c.Natural.Aim, "plan": steps})
			o := reg.park(c.Caller, "system_operation", planned, "steps need the owner's approval")
			return packets.Result{OutputText: o.Text()}, nil
		}
		var b strings.Builder
		var files []string
		for i, s := range steps {
			args, _ := s.arguments()
			o := reg.callAs(ctx, c.Reader(), c.Caller, s.Tool, args, c.Confirmed) // the same reader, through the same checks
			fmt.Fprintf(&b, "%d. %s → %s\n", i+1, s.describe(), o.Text())
			files = append(files, o.Result.OutputFile...)
			if o.Failed() {
				fmt.Fprintf(&b, "stopped at step %d of %d\n", i+1, len(steps))
				break
			}
		}
		return packets.Result{OutputText: b.String(), OutputFile: files}, nil
	}}
}

func (s Step) arguments() (json.RawMessage, error) {
	var v any
	switch s.Tool {
	case "read_file":
		v = map[string]string{"path": s.Path}
	case "write_file":
		v = map[string]string{"path": s.Path, "content": s.Content}
	case "terminal":
		v = map[string]string{"command": s.Command}
	default:
		return nil, fmt.Errorf("%q is not a step (read_file, write_file or terminal)", s.Tool)
	}
	return json.Marshal(v)
}

func (s Step) describe() string {
	switch s.Tool {
	case "terminal":
		return "terminal `" + s.Command + "`"
	case "write_file":
		return fmt.Sprintf("write_file %s (%d bytes)", s.Path, len(s.Content))
	}
	return s.Tool + " " + s.Path
}

func orText(s, alt string) string {
	if strings.TrimSpace(s) == "" {
		return alt
	}
	return s
}
