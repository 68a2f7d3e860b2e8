package packets

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/cyan-agent/cyan/glob"
	"path"
	"slices"
	"sort"
	"strings"
)

// Decision is what a permission object says about a call.
type Decision string

// The decisions. Confirm parks the call until the owner answers.
const (
	Allow   Decision = "allow"
	Deny    Decision = "deny"
	Confirm Decision = "confirm"
)

func (d Decision) severity() int {
	switch d {
	case Allow:
		return 0
	case Confirm:
		return 1
	}
	return 2
}

// Permission is a permission object ("权限对象"): which tools a component
// may call, which information it may see, which parts of itself it may
// edit, and which permission objects it may hand to components it starts.
//
// Tools uses ISDK's rule language (see Rule); a call no rule matches gets
// DefaultAction, which is deny when empty. Infos and SelfEdit are glob
// lists where "!" negation wins and nothing is allowed by default.
type Permission struct {
	Tools         []Rule       `json:"tools"`
	Infos         []string     `json:"infos"`
	SelfEdit      []string     `json:"self_edit"`
	Distribute    []Permission `json:"distribute_permission"`
	DefaultAction Decision     `json:"defaultAction,omitempty"`
	// ceiling bounds every check (Cap): a started component is allowed
	// only what its starter is allowed too.
	ceiling *Permission
}

// Rule is one entry of a tools list, as ISDK writes it:
//
//   - a string glob allows the tools it matches: "weather", "w*";
//   - "!glob" denies them, and a negation always wins;
//   - an object rule names a tool (a glob; no negation) with an action
//     (allow, deny or confirm; allow when absent) and parameter rules, either
//     as one field {read_file: {action: confirm}} or with a name field
//     {name: read_file, action: confirm};
//   - parameter rules map a parameter to globs its values must pass:
//     {file_path: ["!/secret/*", "/safe/**"]} denies a value any "!" glob
//     matches, and, when there are positive globs, one that none matches.
//
// A pattern that starts with "@" matches the tools with that effect
// ("!@execute" denies every tool that runs programs); this is cyan's
// addition, so that rules keep working for tools added later.
type Rule struct {
	Pattern    string              // the glob, without "!"
	Negate     bool                // a "!" string rule
	Object     bool                // an object rule
	Action     Decision            // of an object rule
	Parameters map[string][]string // of an object rule
}

// String writes the rule as it would appear in a list.
func (r Rule) String() string {
	if !r.Object {
		if r.Negate {
			return "!" + r.Pattern
		}
		return r.Pattern
	}
	b, _ := json.Marshal(r)
	return string(b)
}

// MarshalJSON writes a string rule as a string and an object rule as
// {name, action, parameters}.
func (r Rule) MarshalJSON() ([]byte, error) {
	if !r.Object {
		return json.Marshal(r.String())
	}
	o := struct {
		Name       string              `json:"name"`
		Action     Decision            `json:"action"`
		Parameters map[string][]string `json:"parameters,omitempty"`
	}{r.Pattern, r.Action, r.Parameters}
	return json.Marshal(o)
}

// MaxRules bounds the rules of one list.
const MaxRules = 1000

// UnmarshalJSON reads a rule in any of ISDK's forms, with an error that
// says how to write it.
func (r *Rule) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		return r.parseString(s)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil || obj == nil {
		return errors.New(`a rule is a string glob ("w*", "!delete_*") or an object ({read_file: {action: confirm}})`)
	}
	*r = Rule{Object: true, Action: Allow}
	body := obj
	if nameRaw, ok := obj["name"]; ok {
		if err := json.Unmarshal(nameRaw, &r.Pattern); err != nil {
			return errors.New("name must be a string")
		}
	} else {
		if len(obj) != 1 {
			return errors.New("an object rule has one field (the tool's name) or a name field")
		}
		for k, v := range obj {
			r.Pattern = k
			body = nil
			if !bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
				if err := json.Unmarshal(v, &body); err != nil {
					return fmt.Errorf("rule %q: its value must be an object such as {action: confirm}", k)
				}
			}
		}
	}
	if strings.HasPrefix(r.Pattern, "!") {
		return fmt.Errorf("rule %q: object rules cannot negate; write action: deny", r.Pattern)
	}
	if err := glob.Check(r.Pattern); err != nil {
		return fmt.Errorf("rule name: %w", err)
	}
	for k, v := range body {
		switch k {
		case "name":
		case "action":
			var a string
			if err := json.Unmarshal(v, &a); err != nil {
				return fmt.Errorf("rule %q: action must be allow, deny or confirm", r.Pattern)
			}
			switch d := Decision(strings.ToLower(a)); d {
			case Allow, Deny, Confirm:
				r.Action = d
			default:
				return fmt.Errorf("rule %q: action %q is not allow, deny or confirm", r.Pattern, a)
			}
		case "parameters":
			var ps map[string]json.RawMessage
			if err := json.Unmarshal(v, &ps); err != nil {
				return fmt.Errorf("rule %q: parameters must map a parameter to a list of globs", r.Pattern)
			}
			r.Parameters = map[string][]string{}
			for p, raw := range ps {
				var list []string
				if err := json.Unmarshal(raw, &list); err != nil {
					var one string
					if json.Unmarshal(raw, &one) != nil {
						return fmt.Errorf("rule %q: parameter %q: want a list of globs", r.Pattern, p)
					}
					list = []string{one}
				}
				for _, g := range list {
					if err := glob.Check(strings.TrimPrefix(g, "!")); err != nil {
						return fmt.Errorf("rule %q: parameter %q: %q: %w", r.Pattern, p, g, err)
					}
				}
				r.Parameters[p] = list
			}
		default:
			return fmt.Errorf("rule %q: unknown field %q (an object rule has name, action and parameters)", r.Pattern, k)
		}
	}
	return nil
}

func (r *Rule) parseString(s string) error {
	*r = Rule{Pattern: s}
	if rest, ok := strings.CutPrefix(s, "!"); ok {
		r.Negate, r.Pattern = true, rest
	}
	if err := glob.Check(r.Pattern); err != nil {
		return fmt.Errorf("rule %q: %w", s, err)
	}
	return nil
}

// UnmarshalJSON reads a permission object strictly: unknown fields and bad
// rules are errors naming the field and the rule's index.
func (p *Permission) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil || raw == nil {
		return errors.New("a permission object is an object {tools, infos, self_edit, distribute_permission, defaultAction}")
	}
	*p = Permission{}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := raw[k]
		var err error
		switch k {
		case "tools":
			var items []json.RawMessage
			if err = json.Unmarshal(v, &items); err != nil {
				return errors.New("tools must be a list of rules")
			}
			if len(items) > MaxRules {
				return fmt.Errorf("tools has %d rules; at most %d", len(items), MaxRules)
			}
			for i, it := range items {
				var r Rule
				if err := r.UnmarshalJSON(it); err != nil {
					return fmt.Errorf("tools[%d]: %w", i, err)
				}
				p.Tools = append(p.Tools, r)
			}
		case "infos":
			p.Infos, err = globList(v)
		case "self_edit":
			p.SelfEdit, err = globList(v)
		case "distribute_permission":
			err = json.Unmarshal(v, &p.Distribute)
		case "defaultAction", "default_action":
			var a string
			if err = json.Unmarshal(v, &a); err == nil {
				switch d := Decision(strings.ToLower(a)); d {
				case Allow, Deny, Confirm:
					p.DefaultAction = d
				default:
					err = fmt.Errorf("%q is not allow, deny or confirm", a)
				}
			}
		default:
			err = errors.New("unknown field; a permission object has tools, infos, self_edit, distribute_permission and defaultAction")
		}
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	return nil
}

func globList(v json.RawMessage) ([]string, error) {
	var list []string
	if err := json.Unmarshal(v, &list); err != nil {
		return nil, errors.New("must be a list of globs")
	}
	if len(list) > MaxRules {
		return nil, fmt.Errorf("has %d entries; at most %d", len(list), MaxRules)
	}
	for _, g := range list {
		if err := glob.Check(strings.TrimPrefix(g, "!")); err != nil {
			return nil, fmt.Errorf("%q: %w", g, err)
		}
	}
	return list, nil
}

// Subject is a call being checked.
type Subject struct {
	Tool    string
	Effects []string
	// Values returns the values of a parameter as the rules see them
	// (paths cleaned, compound commands split); none when it is absent.
	Values func(param string) []string
	// Text reports the parameters that are not paths (shell commands),
	// whose globs match with glob.Text; nil: every parameter is a path.
	Text func(param string) bool
}

// Verdict is a decision and the rule that made it.
type Verdict struct {
	Decision Decision `json:"decision"`
	Rule     string   `json:"rule"`
}

// matches reports whether a rule's pattern matches a tool.
func (s Subject) matches(pattern string) bool {
	if eff, ok := strings.CutPrefix(pattern, "@"); ok {
		return slices.ContainsFunc(s.Effects, func(e string) bool { return glob.Path(eff, e) })
	}
	return glob.Path(pattern, s.Tool)
}

// Check decides a call:
//
//  1. a matching "!" rule denies, whatever else matches;
//  2. a matching object rule whose parameter rules a value fails, or whose
//     action is deny, denies;
//  3. among the other matching object rules, one that names the tool
//     exactly (no glob, no "@effect") decides over the rest, so an owner can
//     relax a broad rule for one tool ({name: terminal, action: allow} over
//     {name: "@execute", action: confirm}); among equals the most cautious
//     action wins (confirm over allow);
//  4. else a matching string rule allows;
//  5. else DefaultAction, deny when empty.
func (p *Permission) Check(s Subject) Verdict {
	if p == nil {
		return Verdict{Deny, "no permission object"}
	}
	v := p.check(s)
	if p.ceiling != nil {
		if c := p.ceiling.Check(s); c.Decision.severity() > v.Decision.severity() {
			return Verdict{c.Decision, c.Rule + " (the starter's permission)"}
		}
	}
	return v
}

func (p *Permission) check(s Subject) Verdict {
	for _, r := range p.Tools {
		if !r.Object && r.Negate && s.matches(r.Pattern) {
			return Verdict{Deny, r.String()}
		}
	}
	var exact, broad, plain *Verdict
	pick := func(cur **Verdict, v Verdict) {
		if *cur == nil || v.Decision.severity() > (*cur).Decision.severity() {
			*cur = &v
		}
	}
	for _, r := range p.Tools {
		switch {
		case r.Negate || !s.matches(r.Pattern):
		case !r.Object:
			pick(&plain, Verdict{Allow, r.String()})
		default:
			if v, ok := r.checkParameters(s); !ok {
				return v
			}
			action := r.Action
			if action == "" {
				action = Allow
			}
			if action == Deny {
				return Verdict{Deny, r.String()}
			}
			if r.Pattern == s.Tool && !strings.ContainsAny(r.Pattern, "*?@") {
				pick(&exact, Verdict{action, r.String()})
			} else {
				pick(&broad, Verdict{action, r.String()})
			}
		}
	}
	for _, v := range []*Verdict{exact, broad, plain} {
		if v != nil {
			return *v
		}
	}
	d := p.DefaultAction
	if d == "" {
		d = Deny
	}
	return Verdict{d, "defaultAction"}
}

func (r Rule) checkParameters(s Subject) (Verdict, bool) {
	names := make([]string, 0, len(r.Parameters))
	for k := range r.Parameters {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, param := range names {
		globs := r.Parameters[param]
		var values []string
		if s.Values != nil {
			values = s.Values(param)
		}
		matchFn := glob.Path
		if s.Text != nil && s.Text(param) {
			matchFn = glob.Text
		}
		for _, v := range values {
			positive, passed := false, false
			for _, g := range globs {
				if neg, ok := strings.CutPrefix(g, "!"); ok {
					if matchFn(neg, v) {
						return Verdict{Deny, fmt.Sprintf("%s: %s: %s", r.Pattern, param, g)}, false
					}
					continue
				}
				positive = true
				passed = passed || matchFn(g, v)
			}
			if positive && !passed {
				return Verdict{Deny, fmt.Sprintf("%s: %s: %q matches none of the allowed globs", r.Pattern, param, v)}, false
			}
		}
	}
	return Verdict{}, true
}

// SeesInfo reports whether the infos list lets a component see an item.
func (p *Permission) SeesInfo(name string) bool {
	return p != nil && globAllows(p.Infos, name) && (p.ceiling == nil || p.ceiling.SeesInfo(name))
}

// MaySelfEdit reports whether the self_edit list lets a component change a
// part of itself (such as "tools/extra/custom/weather.yaml").
func (p *Permission) MaySelfEdit(part string) bool {
	return p != nil && globAllows(p.SelfEdit, path.Clean(part)) && (p.ceiling == nil || p.ceiling.MaySelfEdit(part))
}

// MayDistribute reports whether p may hand child to a component it starts:
// child must equal one of the presets in distribute_permission.
func (p *Permission) MayDistribute(child Permission) bool {
	if p == nil {
		return false
	}
	want, err := json.Marshal(child)
	if err != nil {
		return false
	}
	for _, d := range p.Distribute {
		if got, err := json.Marshal(d); err == nil && bytes.Equal(got, want) {
			return true
		}
	}
	return false
}

func globAllows(list []string, name string) bool {
	ok := false
	for _, g := range list {
		if neg, isNeg := strings.CutPrefix(g, "!"); isNeg {
			if glob.Path(neg, name) {
				return false
			}
			continue
		}
		ok = ok || glob.Path(g, name)
	}
	return ok
}
