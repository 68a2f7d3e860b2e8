package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/tools"
)

// Tool is a tool as GET /api/v1/tools lists it: what it is, where it
// comes from, and what the owner and everyone else may do with it.
type Tool struct {
	packets.ToolSpec
	// Effects is always a list here ([] for none).
	Effects []string         `json:"effects"`
	Owner   packets.Decision `json:"owner"`
	Others  packets.Decision `json:"others"`
}

func (s *Server) toolsReady(w http.ResponseWriter) bool {
	if s.o.Tools == nil {
		writeError(w, http.StatusServiceUnavailable, "unavailable", "tools are not running in this daemon")
		return false
	}
	return true
}

func (s *Server) listTools(w http.ResponseWriter, _ *http.Request) {
	if !s.toolsReady(w) {
		return
	}
	owner := packets.Caller{Owner: true, Kind: "private"}
	other := packets.Caller{Speaker: "someone", SpeakerID: "\x00not-an-owner", Kind: "group"}
	out := []Tool{}
	for _, t := range s.o.Tools.List() {
		eff := t.Effects
		if eff == nil {
			eff = []string{}
		}
		out = append(out, Tool{ToolSpec: t, Effects: eff,
			Owner:  s.o.Tools.Check(owner, t.Name, nil).Decision,
			Others: s.o.Tools.Check(other, t.Name, nil).Decision})
	}
	body := ToolList{Tools: out, Problems: []*tools.ManifestError{}}
	if s.o.Extras != nil {
		if p := s.o.Extras.Problems(); p != nil {
			body.Problems = p
		}
	}
	if s.o.MCP != nil {
		body.MCP = s.o.MCP.Status()
	}
	writeJSON(w, http.StatusOK, body)
}

// toolRequest runs or checks a tool. As names who is asking: empty for
// the owner (whoever passed the guard); "id:<platform id>" or a display
// name otherwise, with Kind "private" (default) or "group". Whoever it
// names, the call gets that speaker's permission object and no more: the
// owner's own confirm rules still apply, and a call to confirm is parked.
type toolRequest struct {
	Arguments json.RawMessage `json:"arguments"`
	As        string          `json:"as"`
	Kind      string          `json:"kind"`
	Channel   string          `json:"channel"`
}

func (req toolRequest) caller() (packets.Caller, error) {
	c := packets.Caller{Channel: req.Channel, Kind: req.Kind, Process: "api"}
	switch c.Kind {
	case "":
		c.Kind = "private"
	case "private", "group":
	default:
		return c, fmt.Errorf("kind %q is neither private nor group", req.Kind)
	}
	switch id, ok := strings.CutPrefix(req.As, "id:"); {
	case req.As == "":
		c.Owner = true
	case ok:
		c.SpeakerID, c.Speaker = id, req.As
	default:
		c.Speaker = req.As
	}
	return c, nil
}

func (s *Server) decodeToolRequest(w http.ResponseWriter, r *http.Request) (toolRequest, packets.Caller, bool) {
	var req toolRequest
	if !s.toolsReady(w) || !decodeStrict(w, r, &req) {
		return req, packets.Caller{}, false
	}
	c, err := req.caller()
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return req, c, false
	}
	if _, ok := s.o.Tools.Get(r.PathValue("name")); !ok {
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("no tool named %q; cyan tool ls lists them", r.PathValue("name")))
		return req, c, false
	}
	return req, c, true
}

// runOutcome is the answer of a run: the outcome, and when the call was
// parked for approval, what to do next.
type runOutcome struct {
	tools.Outcome
	Message string `json:"message,omitempty"`
}

// runTool runs a call through the same checks as the model's: allowed
// calls run, denied ones do not, and those the caller's rules say to
// confirm are parked (202, with the approval's id) until the owner answers
// POST /api/v1/approvals/{id}.
func (s *Server) runTool(w http.ResponseWriter, r *http.Request) {
	req, c, ok := s.decodeToolRequest(w, r)
	if !ok {
		return
	}
	o := s.o.Tools.Call(r.Context(), c, r.PathValue("name"), req.Arguments)
	if o.Decision == packets.Confirm {
		writeJSON(w, http.StatusAccepted, runOutcome{Outcome: o, Message: fmt.Sprintf(
			"%s did not run: the rule %q asks the owner to confirm it; approval %s waits (cyan approvals allow %s, or POST /api/v1/approvals/%s {\"allow\": true})",
			o.Tool, o.Rule, o.Approval, o.Approval, o.Approval)})
		return
	}
	writeJSON(w, http.StatusOK, runOutcome{Outcome: o})
}

func (s *Server) checkTool(w http.ResponseWriter, r *http.Request) {
	req, c, ok := s.decodeToolRequest(w, r)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, s.o.Tools.Check(c, r.PathValue("name"), req.Arguments))
}

func (s *Server) approvals(w http.ResponseWriter) *tools.Approvals {
	if !s.toolsReady(w) {
		return nil
	}
	a := s.o.Tools.Approvals()
	if a == nil {
		writeError(w, http.StatusServiceUnavailable, "unavailable", "approvals are off in this daemon")
	}
	return a
}

func (s *Server) listApprovals(w http.ResponseWriter, _ *http.Request) {
	a := s.approvals(w)
	if a == nil {
		return
	}
	list, err := a.Pending()
	if err != nil {
		writeError(w, http.StatusInternalServerError, "storage", err.Error())
		return
	}
	if list == nil {
		list = []tools.Approval{}
	}
	writeJSON(w, http.StatusOK, ApprovalList{Approvals: list})
}

func (s *Server) answerApproval(w http.ResponseWriter, r *http.Request) {
	a := s.approvals(w)
	if a == nil {
		return
	}
	var req struct {
		Allow *bool `json:"allow"`
	}
	if !decodeBody(w, r, &req) {
		return
	}
	if req.Allow == nil {
		writeError(w, http.StatusBadRequest, "invalid_request", `say {"allow": true} to run the call or {"allow": false} to refuse it`)
		return
	}
	ans, err := a.Answer(r.Context(), r.PathValue("id"), *req.Allow)
	switch {
	case errors.Is(err, tools.ErrNoApproval):
		writeError(w, http.StatusNotFound, "not_found", err.Error())
	case errors.Is(err, tools.ErrExpired):
		writeError(w, http.StatusGone, "expired", err.Error())
	case errors.Is(err, tools.ErrAnswered):
		writeError(w, http.StatusConflict, "answered", err.Error())
	case err != nil:
		writeError(w, http.StatusInternalServerError, "storage", err.Error())
	default:
		writeJSON(w, http.StatusOK, ans)
	}
}
