package api

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/cyan-agent/cyan/memory"
)

// memoryItem is a workspace item as the API shows it: its memory state
// flat, T its own scope's clock now (memory decays per scope), R computed
// at T.
type memoryItem struct {
	ID          string             `json:"id"`
	Kind        memory.Kind        `json:"kind"`
	Content     string             `json:"content"`
	Summary     string             `json:"summary,omitempty"`
	Info        *memory.Info       `json:"info,omitempty"`
	R           float64            `json:"R"`
	T           int64              `json:"T"`
	S           float64            `json:"S"`
	D           float64            `json:"D"`
	A           float64            `json:"a"`
	LastT       int64              `json:"last_T"`
	Last        *memory.Compressed `json:"last_compressed_state,omitempty"`
	InWorkspace bool               `json:"in_workspace"`
	Pinned      bool               `json:"pinned,omitempty"`
	Original    string             `json:"original,omitempty"`
	Left        *memory.Departure  `json:"left,omitempty"`
	Origin      memory.Origin      `json:"origin"`
	// A changed fact's history (memory.Item): what it replaced, what
	// replaced it and when it stopped holding.
	Supersedes   string     `json:"supersedes,omitempty"`
	SupersededBy string     `json:"superseded_by,omitempty"`
	Until        *time.Time `json:"until,omitempty"`
}

func itemJSON(v memory.ItemView) memoryItem {
	return memoryItem{
		ID: v.ID, Kind: v.Kind, Content: v.Content, Summary: v.Summary, Info: v.Info,
		R: v.R, T: v.T, S: v.State.S, D: v.State.D, A: v.State.A, LastT: v.State.LastT, Last: v.State.Last,
		InWorkspace: v.InWorkspace, Pinned: v.Pinned, Original: v.Original, Left: v.Left, Origin: v.Origin,
		Supersedes: v.Supersedes, SupersededBy: v.SupersededBy, Until: v.Until,
	}
}

// listMemory: GET /api/v1/memory[?all=1] — the workspace (all=1: also the
// items that left it), the turn counter T, the latest usage reports and GC
// events.
func (s *Server) listMemory(w http.ResponseWriter, r *http.Request) {
	all := r.URL.Query().Get("all") == "1" || r.URL.Query().Get("all") == "true"
	items := []memoryItem{}
	for _, v := range s.o.Memory.Items(all) {
		items = append(items, itemJSON(v))
	}
	usage := s.o.Memory.UsageLog()
	if len(usage) > 20 {
		usage = usage[len(usage)-20:]
	}
	gc := s.o.Memory.GCLog()
	if len(gc) > 20 {
		gc = gc[len(gc)-20:]
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"turn": s.o.Memory.Turn(), "items": items, "plans": nonNilPlans(s.o.Memory.Plans(memory.Viewer{})),
		"usage": usage, "gc": gc,
	})
}

func nonNilPlans(p []memory.Plan) []memory.Plan {
	if p == nil {
		return []memory.Plan{}
	}
	return p
}

// getMemory: GET /api/v1/memory/{id}[?curve=N] — one item, with the items
// it replaced (history, newest first) when its fact changed; with curve,
// its R at each of the next N turns if it goes unused.
func (s *Server) getMemory(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	v, err := s.o.Memory.Get(id)
	if errors.Is(err, memory.ErrNotFound) {
		writeError(w, http.StatusNotFound, "not_found", err.Error()+"; 'cyan memory ls --all' lists the ids")
		return
	}
	out := struct {
		memoryItem
		Turn    int64        `json:"turn"`
		Curve   []float64    `json:"curve,omitempty"`
		History []memoryItem `json:"history,omitempty"`
	}{memoryItem: itemJSON(v), Turn: s.o.Memory.Turn()}
	if h, err := s.o.Memory.History(id); err == nil {
		for _, old := range h[1:] {
			out.History = append(out.History, itemJSON(old))
		}
	}
	if c := r.URL.Query().Get("curve"); c != "" {
		n, err := strconv.Atoi(c)
		if err != nil || n < 1 || n > 1000 {
			writeError(w, http.StatusBadRequest, "invalid_request", "curve must be a number of turns from 1 to 1000")
			return
		}
		out.Curve, _ = s.o.Memory.CurveOf(id, n)
	}
	writeJSON(w, http.StatusOK, out)
}

// deleteMemory removes an item for good (the user's forget).
func (s *Server) deleteMemory(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	err := s.o.Memory.Delete(id)
	switch {
	case errors.Is(err, memory.ErrNotFound):
		writeError(w, http.StatusNotFound, "not_found", err.Error()+"; 'cyan memory ls --all' lists the ids")
	case err != nil:
		writeError(w, http.StatusInternalServerError, "storage", err.Error())
	default:
		writeJSON(w, http.StatusOK, map[string]string{"deleted": id})
	}
}
