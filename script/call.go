package script

import (
	"context"
	"fmt"
	"path/filepath"
)

// Call runs the script called name on behalf of cyan's own code — a step
// of memory, the event log, a natural tool, an observer — and decodes its
// validated value into out (a pointer; nil leaves it undecoded).
//
// It is the one shape every LLM-backed step of cyan goes through, so a
// package declares it as a small interface of its own and the daemon
// passes the Library:
//
//	type Scripts interface {
//		Call(ctx context.Context, name, channel string, in map[string]any, out any) error
//	}
//
// in holds the step's structured inputs (Go values that encode to JSON:
// structs by their json tags, slices, maps). When the script declares its
// inputs, those it does not declare are left out, so code may pass all it
// knows and a persona's override may take fewer; a declared input's type,
// enum and required-ness are still checked. channel is the conversation
// the step serves, for the traces ("" for none). Every site is a generate
// call, traced in the generator's ring like any other.
//
// A value that does not decode into out is an error naming the script;
// other errors are as Run's (*InputError, *Error, *generate.Error, whose
// Unwrap reaches the *llm.Error of a provider failure).
func (l *Library) Call(ctx context.Context, name, channel string, in map[string]any, out any) error {
	s, err := l.Load(name)
	if err != nil {
		return err
	}
	return l.call(ctx, s, channel, in, out)
}

// CallFile is Call for a script file on disk rather than a name: an extra
// tool's "run: {script: file.ai.yaml}". Names it extends are looked for in
// its own folder, then the persona's scripts/, then the built-in ones. The
// file is read on every call, so an edit applies to the next one.
func (l *Library) CallFile(ctx context.Context, file, channel string, in map[string]any, out any) error {
	s, err := l.LoadFile(file)
	if err != nil {
		return err
	}
	return l.call(ctx, s, channel, in, out)
}

// CheckFile parses a script file on disk, as CallFile would, without
// running it.
func (l *Library) CheckFile(file string) error {
	_, err := l.LoadFile(file)
	return err
}

func (l *Library) call(ctx context.Context, s *Script, channel string, in map[string]any, out any) error {
	args := s.Declared(in)
	// Go values become JSON values first, so that a nil slice or map is
	// null (a missing input), as it would be on the wire.
	for k, v := range args {
		pv, err := plainValue(v)
		if err != nil {
			return &InputError{Script: s.Name, Input: k, Msg: "is not a JSON value: " + err.Error()}
		}
		args[k] = pv
	}
	res, err := s.Run(ctx, l.gen, args, RunOptions{Channel: channel})
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := res.Decode(out); err != nil {
		return fmt.Errorf("script %s (%s): its value %.200s is not what cyan reads from it (%v); "+
			"keep the output: shape of the built-in script of that name", s.Name, filepath.Base(s.File), res.JSON, err)
	}
	return nil
}

// Declared returns the inputs of in that the script declares (all of them
// when it declares none). The map is new; in is not changed.
func (s *Script) Declared(in map[string]any) map[string]any {
	out := make(map[string]any, len(in))
	if len(s.Inputs) == 0 {
		for k, v := range in {
			out[k] = v
		}
		return out
	}
	for _, d := range s.Inputs {
		if v, ok := in[d.Name]; ok {
			out[d.Name] = v
		}
	}
	return out
}
