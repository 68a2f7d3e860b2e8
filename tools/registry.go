package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/packets"
)

// Options configure New.
type Options struct {
	// Owners tells the owner from everyone else.
	Owners Owners
	// Owner and Guest are the permission objects of the owner's turns and
	// of everyone else's (nil: DefaultOwner, DefaultGuest).
	Owner, Guest *packets.Permission
	// Pull, if set, is told what a turn's call (Registry.Call) opened —
	// a file read_file read, a reference open opened — so it is listed in
	// the channel's pulled-info area (memory.Memory.PullRead): ref is the
	// path or reference, text what the call returned.
	Pull   func(channel, ref, text string)
	Logger *slog.Logger // nil: discard
}

// Registry holds the tools and runs calls through the permission checks.
// It is safe for concurrent use; tools come and go while it runs (extra
// folders, MCP servers).
type Registry struct {
	owners       Owners
	owner, guest *packets.Permission
	log          *slog.Logger
	ai           *fifo
	approvals    *Approvals
	pull         func(channel, ref, text string)

	mu         sync.RWMutex
	tools      map[string]entry
	components map[string]*packets.Permission
}

// New builds an empty registry.
func New(o Options) *Registry {
	if o.Owner == nil {
		o.Owner = DefaultOwner()
	}
	if o.Guest == nil {
		o.Guest = DefaultGuest()
	}
	o.Owner, o.Guest = withDefaults(o.Owner, DefaultOwner()), withDefaults(o.Guest, DefaultGuest())
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Owners.ids == nil {
		o.Owners, _ = ParseOwners(nil)
	}
	return &Registry{owners: o.Owners, owner: o.Owner, guest: o.Guest, log: o.Logger, ai: newFIFO(), tools: map[string]entry{}, pull: o.Pull,
		components: map[string]*packets.Permission{}}
}

// ErrTaken is returned when a name is already used by another source.
var ErrTaken = errors.New("the name is taken")

// Register adds a tool. A built-in's name must be free; an invalid spec is
// an error that names what to fix.
func (r *Registry) Register(t packets.Tool) error {
	if t.Source == "" {
		t.Source = SourceBuiltin
	}
	if err := checkTool(t); err != nil {
		return err
	}
	e := withPacketFields(t)
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.tools[t.Name]; ok {
		return fmt.Errorf("tools: %s: %w by %s", t.Name, ErrTaken, old.Source)
	}
	r.tools[t.Name] = e
	return nil
}

// RegisterAll adds the tools every part exports (the files and terminal
// here, the workspace's, the event log's, recall's, …), in one loop; it
// stops at the first that does not register.
func (r *Registry) RegisterAll(parts ...[]packets.Tool) error {
	for _, part := range parts {
		for _, t := range part {
			if err := r.Register(t); err != nil {
				return err
			}
		}
	}
	return nil
}

// Replace sets the tools of one source at once: those not in list leave,
// the rest are added or updated. A name another source holds is skipped
// and reported; built-ins and earlier sources keep their names.
func (r *Registry) Replace(source string, list []packets.Tool) []error {
	var errs []error
	r.mu.Lock()
	defer r.mu.Unlock()
	for name, t := range r.tools {
		if t.Source == source {
			delete(r.tools, name)
		}
	}
	for _, t := range list {
		t.Source = source
		if err := checkTool(t); err != nil {
			errs = append(errs, err)
			continue
		}
		if old, ok := r.tools[t.Name]; ok {
			errs = append(errs, fmt.Errorf("tools: %s: %w by %s", t.Name, ErrTaken, old.Source))
			continue
		}
		r.tools[t.Name] = withPacketFields(t)
	}
	return errs
}

func checkTool(t packets.Tool) error {
	switch {
	case !ValidName(t.Name):
		return fmt.Errorf("tools: %q is not a tool name (a letter, then letters, digits, _ . -; at most 64)", t.Name)
	case t.Run == nil:
		return fmt.Errorf("tools: %s has no run function", t.Name)
	case strings.TrimSpace(t.Description) == "" && strings.TrimSpace(t.Title) == "":
		return fmt.Errorf("tools: %s needs a title or a description, so the model knows when to call it", t.Name)
	case t.Kind != packets.ToolProcess && t.Kind != packets.ToolNatural:
		return fmt.Errorf("tools: %s: kind %q is neither process nor natural", t.Name, t.Kind)
	case t.Effects == nil:
		return fmt.Errorf("tools: %s declares no effects; list what it can do (%s), or an empty list when it does none of these, so the permission checks know who may call it",
			t.Name, strings.Join(AllEffects, ", "))
	}
	for _, e := range t.Effects {
		if !slices.Contains(AllEffects, e) {
			return fmt.Errorf("tools: %s: %q is not an effect (%s)", t.Name, e, strings.Join(AllEffects, ", "))
		}
	}
	if len(t.Parameters) > 0 {
		var schema map[string]any
		if err := json.Unmarshal(t.Parameters, &schema); err != nil || schema["type"] != "object" {
			return fmt.Errorf("tools: %s: parameters must be a JSON Schema object ({\"type\": \"object\", …})", t.Name)
		}
	}
	return nil
}

// Get returns a tool's spec.
func (r *Registry) Get(name string) (packets.ToolSpec, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.tools[name]
	return t.ToolSpec, ok
}

// List returns every tool's spec, by name.
func (r *Registry) List() []packets.ToolSpec {
	r.mu.RLock()
	out := make([]packets.ToolSpec, 0, len(r.tools))
	for _, t := range r.tools {
		out = append(out, t.ToolSpec)
	}
	r.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// IsOwner reports whether c is the owner.
func (r *Registry) IsOwner(c packets.Caller) bool { return r.owners.Match(c) }

// PermissionFor returns the permission object of a caller: its
// component's own (SetComponent), else the owner's or everyone else's.
func (r *Registry) PermissionFor(c packets.Caller) *packets.Permission {
	if c.Process != "" {
		r.mu.RLock()
		p, ok := r.components[c.Process]
		r.mu.RUnlock()
		if ok {
			return p
		}
	}
	if r.IsOwner(c) {
		return r.owner
	}
	return r.guest
}

// SetComponent gives a component (a process name such as
// "observer:weather") its own permission object, which its calls use
// instead of the owner's or everyone else's; nil removes it. The daemon
// hands a started component at most its starter's rights
// (packets.Permission.Cap).
func (r *Registry) SetComponent(name string, p *packets.Permission) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p == nil {
		delete(r.components, name)
		return
	}
	r.components[name] = p
}

// Component returns the permission object of a component registered
// with SetComponent.
func (r *Registry) Component(name string) (*packets.Permission, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	p, ok := r.components[name]
	return p, ok
}

// Reader resolves a caller into its one reader (packets.Reader): whether
// it is the owner (Owners, by id), its permission object, the component it
// runs as, and its audience — everyone else's permission object, unless the
// owner is alone in the conversation. Every part that filters by person
// asks the value it returns; a turn resolves it once when it starts.
func (r *Registry) Reader(c packets.Caller) packets.Reader {
	comp := ""
	if _, ok := r.Component(c.Process); ok && c.Process != "" {
		comp = c.Process // a plan it makes keeps its permission
	}
	return packets.NewReader(c, r.IsOwner(c), r.PermissionFor(c), comp, r.guest)
}

// OwnerPermission is the permission object of the owner's turns.
func (r *Registry) OwnerPermission() *packets.Permission { return r.owner }

// Offer lists the tools a caller may call (allowed or to be confirmed),
// by name: the tools its permission object denies outright are not shown,
// nor those whose part does not offer them to this caller now
// (packets.Tool.Offered).
func (r *Registry) Offer(c packets.Caller) []packets.ToolSpec {
	return r.OfferTo(r.Reader(c), c)
}

// OfferTo is Offer for a reader resolved already (a turn's).
func (r *Registry) OfferTo(rd packets.Reader, c packets.Caller) []packets.ToolSpec {
	call := packets.CallOf(rd, c)
	r.mu.RLock()
	list := make([]entry, 0, len(r.tools))
	for _, t := range r.tools {
		list = append(list, t)
	}
	r.mu.RUnlock()
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	var out []packets.ToolSpec
	for _, t := range list {
		if call.Perm.Check(subject(t.ToolSpec, nil)).Decision == packets.Deny {
			continue
		}
		if t.Offered != nil && !t.Offered(call) {
			continue
		}
		out = append(out, t.ToolSpec)
	}
	return out
}

// ModelTools are the tools Offer lists for c as the model is offered
// them: the title, when it says more, before the description.
func (r *Registry) ModelTools(c packets.Caller) []llm.Tool {
	return r.ModelToolsTo(r.Reader(c), c)
}

// ModelToolsTo is ModelTools for a reader resolved already (a turn's).
func (r *Registry) ModelToolsTo(rd packets.Reader, c packets.Caller) []llm.Tool {
	var out []llm.Tool
	for _, s := range r.OfferTo(rd, c) {
		desc := s.Description
		if s.Title != "" && s.Title != desc {
			desc = s.Title + ". " + desc
		}
		out = append(out, llm.Tool{Name: s.Name, Description: desc, Parameters: s.Parameters})
	}
	return out
}

// Resolve is a caller as a tool's run function sees it (a call of no tool
// yet): its reader (Reader) as a call.
func (r *Registry) Resolve(c packets.Caller) *packets.ToolCall { return r.resolve(c) }

func (r *Registry) resolve(c packets.Caller) *packets.ToolCall { return packets.CallOf(r.Reader(c), c) }

// Check decides a call without running it, as the caller's reader would
// (its permission, capped by its audience). An unknown tool is denied.
func (r *Registry) Check(c packets.Caller, name string, args json.RawMessage) packets.Verdict {
	spec, ok := r.Get(name)
	if !ok {
		return packets.Verdict{Decision: packets.Deny, Rule: "unknown tool"}
	}
	obj, err := argsObject(args)
	if err != nil {
		return packets.Verdict{Decision: packets.Deny, Rule: argsRule + err.Error()}
	}
	return decide(r.Reader(c), c, spec, obj, false)
}

// checkAs is Check for a reader resolved already.
func (r *Registry) checkAs(rd packets.Reader, c packets.Caller, name string, args json.RawMessage) packets.Verdict {
	spec, ok := r.Get(name)
	if !ok {
		return packets.Verdict{Decision: packets.Deny, Rule: "unknown tool"}
	}
	obj, err := argsObject(args)
	if err != nil {
		return packets.Verdict{Decision: packets.Deny, Rule: "arguments: " + err.Error()}
	}
	return decide(rd, c, spec, obj, false)
}

// decide is the verdict on a call of spec by rd: its permission's, capped
// by its audience's — a call the reader may make and its audience may not
// waits for the owner's confirmation, unless the owner confirmed it.
func decide(rd packets.Reader, c packets.Caller, spec packets.ToolSpec, args map[string]any, confirmed bool) packets.Verdict {
	sub := subject(spec, args)
	v := rd.Perm.Check(sub)
	if v.Decision == packets.Allow && rd.Audience != nil && !confirmed {
		if av := rd.Audience.Check(sub); av.Decision != packets.Allow {
			v = packets.Verdict{Decision: packets.Confirm, Rule: audienceRule(c, fmt.Sprintf("%s is not theirs to call (rule %s)", spec.Name, av.Rule))}
		}
	}
	return v
}

// Outcome is a finished (or parked, or refused) call.
type Outcome struct {
	Tool     string           `json:"tool"`
	Decision packets.Decision `json:"decision"`
	Rule     string           `json:"rule"`
	Result   packets.Result   `json:"result"`
	// Error is the tool's own failure (bad arguments, a missing file).
	Error string `json:"error,omitempty"`
	// Approval is the id of the parked call when Decision is confirm.
	Approval string `json:"approval,omitempty"`
	// Report and Transient come from the tool's spec (packets.ToolSpec.Report,
	// packets.ToolSpec.TransientResults) for a call that ran.
	Report    bool `json:"-"`
	Transient bool `json:"-"`
}

// Failed reports whether the call did not produce a result.
func (o Outcome) Failed() bool { return o.Decision != packets.Allow || o.Error != "" }

// Text is what the model reads as the tool's result.
func (o Outcome) Text() string {
	switch {
	case o.Decision == packets.Deny && strings.HasPrefix(o.Rule, argsRule):
		// Not a rule's refusal: the call could not be read. One instruction.
		return fmt.Sprintf("error: %s did not run: %s.", o.Tool, strings.TrimPrefix(o.Rule, argsRule))
	case o.Decision == packets.Deny:
		return fmt.Sprintf("denied: %s may not be called here (rule %s); it did not run. Do not retry; tell the speaker if it matters.", o.Tool, o.Rule)
	case o.Decision == packets.Confirm:
		return fmt.Sprintf("waiting for the owner's approval (approval %s): %s has not run yet; its result will appear among the tool calls once the owner answers.", o.Approval, o.Tool)
	case o.Error != "":
		return "error: " + o.Error
	case len(o.Result.OutputFile) > 0:
		b, _ := json.Marshal(o.Result)
		return string(b)
	}
	return o.Result.OutputText
}

// Call checks and runs one call of a turn for c. Every failure is in the
// Outcome. What a call that ran opened (a transient result: a file read,
// an opened reference) goes to Options.Pull.
func (r *Registry) Call(ctx context.Context, c packets.Caller, name string, args json.RawMessage) Outcome {
	return r.CallAs(ctx, r.Reader(c), c, name, args)
}

// CallAs is Call for a reader resolved already: a turn resolves its reader
// once when it starts, and each of its calls runs as that reader.
func (r *Registry) CallAs(ctx context.Context, rd packets.Reader, c packets.Caller, name string, args json.RawMessage) Outcome {
	o := r.callAs(ctx, rd, c, name, args, false)
	if o.Transient && !o.Failed() && r.pull != nil {
		r.pull(c.Channel, openedRef(args), o.Result.OutputText)
	}
	return o
}

// openedRef is what a transient call opened, as its arguments name it:
// read_file's path, open's ref.
func openedRef(args json.RawMessage) string {
	var a struct{ Path, Ref string }
	_ = json.Unmarshal(args, &a)
	return a.Path + a.Ref
}

func (r *Registry) call(ctx context.Context, c packets.Caller, name string, args json.RawMessage, confirmed bool) Outcome {
	return r.callAs(ctx, r.Reader(c), c, name, args, confirmed)
}

// callAs checks and runs a call of rd. The audience cap applies here: a call
// its reader's permission allows but its audience's does not (a file read,
// a component, a custom tool, in a group) waits for the owner's
// confirmation, and so does a call whose run meets data the audience may
// not read (packets.Reader.Withheld); a confirmed call runs uncapped.
func (r *Registry) callAs(ctx context.Context, rd packets.Reader, c packets.Caller, name string, args json.RawMessage, confirmed bool) Outcome {
	out := Outcome{Tool: name, Result: packets.Result{OutputFile: []string{}}}
	r.mu.RLock()
	t, ok := r.tools[name]
	r.mu.RUnlock()
	if !ok {
		out.Decision, out.Rule = packets.Deny, "unknown tool"
		return out
	}
	obj, err := argsObject(args)
	if err != nil {
		out.Decision, out.Rule = packets.Deny, argsRule+err.Error()
		return out
	}
	call := packets.CallOf(rd, c)
	v := decide(rd, c, t.ToolSpec, obj, confirmed)
	out.Decision, out.Rule = v.Decision, v.Rule
	switch {
	case v.Decision == packets.Deny:
		r.log.Info("tool call denied", "tool", name, "channel", c.Channel, "speaker", c.Speaker, "speaker_id", c.SpeakerID, "owner", rd.Owner, "rule", v.Rule)
		return out
	case v.Decision == packets.Confirm && !confirmed:
		if strings.HasPrefix(v.Rule, audiencePrefix) {
			r.logCapped(rd, c, name)
		}
		return r.park(c, name, normalized(args), v.Rule)
	}
	out.Decision = packets.Allow
	out.Report, out.Transient = t.Report, t.TransientResults()
	call.Tool, call.Args, call.Confirmed = name, normalized(args), confirmed
	ctx = context.WithValue(ctx, registryKey{}, r) // for the tools that run others
	if t.Kind == packets.ToolNatural {
		n, own, err := naturalOf(t, call.Args)
		if err != nil {
			out.Error = err.Error()
			return out
		}
		if len(n.Appendix) > 0 {
			if n.Opened, err = r.openAppendix(ctx, rd, c, call, n.Appendix, confirmed); err != nil {
				out.Error = fmt.Sprintf("%s: %v", name, err)
				return out
			}
		}
		call.Natural, call.Args = &n, own
		if b, err := json.Marshal(n); err == nil {
			ctx = llm.WithPacket(ctx, b) // the traces of its model calls show it
		}
	}
	if t.AI {
		release, err := r.ai.acquire(ctx)
		if err != nil {
			out.Error = "cancelled while waiting for the AI tool queue"
			return out
		}
		defer release()
	}
	res, err := runSafely(ctx, t.Run, call)
	if withheld := (*packets.AudienceError)(nil); errors.As(err, &withheld) && !confirmed {
		r.logCapped(rd, c, name)
		return r.park(c, name, normalized(args), audienceRule(c, fmt.Sprintf("%q is the owner's", withheld.What))) // quoted: the model named it
	}
	if call.Natural != nil {
		res = call.Natural.Clip(res)
	} else {
		res = (packets.Natural{OutputTextLimit: packets.Unlimited}).Clip(res)
	}
	out.Result = res
	if err != nil {
		out.Error = err.Error()
	}
	return out
}

// logCapped logs a call its audience capped, naming whom it acted for by
// id and whether that is the owner (never by nickname alone).
func (r *Registry) logCapped(rd packets.Reader, c packets.Caller, name string) {
	r.log.Info("tool call capped by its audience; it waits for the owner", "tool", name, "channel", c.Channel, "kind", c.Kind,
		"speaker", c.Speaker, "speaker_id", c.SpeakerID, "owner", rd.Owner, "component", rd.Component)
}

// audiencePrefix opens the rule of a call its audience capped.
const audiencePrefix = "audience: "

// audienceRule is the rule a call capped by its audience waits under: it
// says where the result would be posted and why the owner must confirm.
func audienceRule(c packets.Caller, why string) string {
	where := fmt.Sprintf("the private conversation %q, which someone other than the owner reads", c.Channel)
	if !packets.Private(c.Kind) {
		where = fmt.Sprintf("the group %q, where others than the owner read it", c.Channel)
	}
	return fmt.Sprintf("%sthe result would be posted in %s; %s — the owner confirms before it is shown there", audiencePrefix, where, why)
}

// park keeps a call for the owner's answer and says so.
func (r *Registry) park(c packets.Caller, name string, args json.RawMessage, rule string) Outcome {
	out := Outcome{Tool: name, Decision: packets.Confirm, Rule: rule, Result: packets.Result{OutputFile: []string{}}}
	if r.approvals == nil {
		out.Decision, out.Rule = packets.Deny, rule+" (needs the owner's approval, and approvals are off)"
		return out
	}
	a, err := r.approvals.park(c, name, args, rule)
	if err != nil {
		out.Decision, out.Rule = packets.Deny, rule+" (could not park for approval: "+err.Error()+")"
		return out
	}
	out.Approval = a.ID
	return out
}

func runSafely(ctx context.Context, run packets.ToolFunc, c *packets.ToolCall) (res packets.Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%s crashed: %v", c.Tool, v)
		}
	}()
	return run(ctx, c)
}

// argsRule opens the rule of a call denied because its arguments could
// not be read.
const argsRule = "arguments: "

func argsObject(args json.RawMessage) (map[string]any, error) {
	t := bytes.TrimSpace(args)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return map[string]any{}, nil
	}
	var obj map[string]any
	if err := json.Unmarshal(t, &obj); err != nil || obj == nil {
		return nil, errors.New("the arguments are not a JSON object; call it once more with a JSON object of its parameters, or answer without it")
	}
	return obj, nil
}

func normalized(args json.RawMessage) json.RawMessage {
	t := bytes.TrimSpace(args)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return json.RawMessage("{}")
	}
	return json.RawMessage(t)
}

// subject is what the rules see of a call: path parameters cleaned,
// command parameters split into their parts.
func subject(s packets.ToolSpec, args map[string]any) packets.Subject {
	return packets.Subject{Tool: s.Name, Effects: s.Effects, Text: func(param string) bool {
		return !slices.Contains(s.PathParams, param)
	}, Values: func(param string) []string {
		v, ok := args[param]
		if !ok {
			return nil
		}
		var vals []string
		switch x := v.(type) {
		case string:
			vals = []string{x}
		case []any:
			for _, e := range x {
				if s, ok := e.(string); ok {
					vals = append(vals, s)
				} else {
					b, _ := json.Marshal(e)
					vals = append(vals, string(b))
				}
			}
		default:
			b, _ := json.Marshal(x)
			vals = []string{string(b)}
		}
		switch {
		case slices.Contains(s.PathParams, param):
			for i, p := range vals {
				vals[i] = cleanRulePath(p)
			}
		case slices.Contains(s.CommandParams, param):
			var parts []string
			for _, cmd := range vals {
				ps, err := SplitCommand(cmd)
				if err != nil {
					ps = []string{cmd}
				}
				parts = append(parts, ps...)
			}
			vals = parts
		}
		return vals
	}}
}

// cleanRulePath is a path as the rules see it: a "%[path] Line n ~ Line m"
// reference reduced to its path, then cleaned.
func cleanRulePath(p string) string {
	if ref, err := ParseRef(p); err == nil {
		p = ref.Path
	}
	if p == "" {
		return p
	}
	return path.Clean(p)
}

// fifo serialises the AI tools: one runs at a time, the others wait in the
// order they came.
type fifo struct {
	mu    sync.Mutex
	busy  bool
	queue []chan struct{}
}

func newFIFO() *fifo { return &fifo{} }

func (f *fifo) acquire(ctx context.Context) (func(), error) {
	f.mu.Lock()
	if !f.busy {
		f.busy = true
		f.mu.Unlock()
		return f.release, nil
	}
	ch := make(chan struct{})
	f.queue = append(f.queue, ch)
	f.mu.Unlock()
	select {
	case <-ch:
		return f.release, nil
	case <-ctx.Done():
		f.mu.Lock()
		defer f.mu.Unlock()
		if i := slices.Index(f.queue, ch); i >= 0 {
			f.queue = slices.Delete(f.queue, i, i+1)
			return nil, ctx.Err()
		}
		// Handed the slot while giving up: pass it on.
		f.mu.Unlock()
		f.release()
		f.mu.Lock()
		return nil, ctx.Err()
	}
}

func (f *fifo) release() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.queue) == 0 {
		f.busy = false
		return
	}
	next := f.queue[0]
	f.queue = f.queue[1:]
	close(next)
}

// CallAsOwner runs a call the owner makes by hand (the command line): the
// owner's permission object applies, and confirm needs no approval since
// the owner is the one asking; deny still wins.
func (r *Registry) CallAsOwner(ctx context.Context, c packets.Caller, name string, args json.RawMessage) Outcome {
	c.Owner = true
	return r.call(ctx, c, name, args, true)
}

// Approvals returns the approvals of EnableApprovals, or nil.
func (r *Registry) Approvals() *Approvals { return r.approvals }

// Bounds of an opened appendix: each reference's text, and all of them.
const (
	MaxAppendixRunes      = 8000
	MaxAppendixTotalRunes = 32000
)

// openAppendix opens a natural packet's appendix under the turn's reader,
// as the caller's read_file would be decided (decide: its permission and
// its audience): a reference not allowed outright (denied, or one that
// would need the owner's confirmation — a file of the owner's in a group
// turn, unless the owner confirmed the call), or one the paths refuse (outside the roots, a
// credential file such as /etc/shadow), refuses the call with the reason,
// so the step never sees what its caller could not read.
func (r *Registry) openAppendix(ctx context.Context, rd packets.Reader, c packets.Caller, call *packets.ToolCall, list []string, confirmed bool) ([]packets.Opened, error) {
	r.mu.RLock()
	rf, ok := r.tools["read_file"]
	r.mu.RUnlock()
	var out []packets.Opened
	total := 0
	for _, ref := range list {
		if !ok {
			return nil, fmt.Errorf("appendix %s: no file can be read here; leave the appendix out", ref)
		}
		args := map[string]any{"path": ref}
		if v := decide(rd, c, rf.ToolSpec, args, confirmed); v.Decision != packets.Allow {
			return nil, fmt.Errorf("appendix %s: you may not read it here (rule %s); leave it out, or read it with read_file first", ref, v.Rule)
		}
		raw, _ := json.Marshal(args)
		sub := *call
		sub.Tool, sub.Args, sub.Natural = "read_file", raw, nil
		res, err := runSafely(ctx, rf.Run, &sub)
		if err != nil {
			return nil, fmt.Errorf("appendix %s: %v", ref, err)
		}
		text := packets.CutText(res.OutputText, min(MaxAppendixRunes, max(0, MaxAppendixTotalRunes-total)))
		total += utf8.RuneCountInString(text)
		out = append(out, packets.Opened{Ref: ref, Text: text})
	}
	return out, nil
}
