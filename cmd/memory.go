package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/packets"
)

// memItem is an item as the daemon lists it.
type memItem struct {
	ID          string  `json:"id"`
	Kind        string  `json:"kind"`
	Content     string  `json:"content"`
	Summary     string  `json:"summary"`
	R           float64 `json:"R"`
	S           float64 `json:"S"`
	D           float64 `json:"D"`
	A           float64 `json:"a"`
	LastT       int64   `json:"last_T"`
	InWorkspace bool    `json:"in_workspace"`
	Pinned      bool    `json:"pinned"`
	Original    string  `json:"original"`
	Last        *struct {
		R             float64 `json:"R"`
		S             float64 `json:"S"`
		LastTDistance int64   `json:"last_T_distance"`
		D             float64 `json:"D"`
		A             float64 `json:"a"`
	} `json:"last_compressed_state"`
	Left *struct {
		Turn   int64  `json:"turn"`
		Reason string `json:"reason"`
	} `json:"left"`
	Origin struct {
		Channel string `json:"channel"`
		Speaker string `json:"speaker"`
		Kind    string `json:"kind"`
	} `json:"origin"`
	Curve        []float64  `json:"curve"`
	Turn         int64      `json:"turn"`
	Supersedes   string     `json:"supersedes"`
	SupersededBy string     `json:"superseded_by"`
	Until        *time.Time `json:"until"`
	History      []memItem  `json:"history"`
}

func memoryLs(f *flags) run {
	all := f.Bool("all", false, "also the items that left the workspace")
	asJSON := f.json()
	return func(io IO, _ []string) error {
		c, _, err := dial(io)
		if err != nil {
			return err
		}
		path := "/api/v1/memory"
		if *all {
			path += "?all=1"
		}
		var raw json.RawMessage
		if err := c.do("GET", path, nil, &raw); err != nil {
			return err
		}
		if *asJSON {
			return printJSON(io.Stdout, raw)
		}
		var out struct {
			Turn  int64     `json:"turn"`
			Items []memItem `json:"items"`
		}
		if err := json.Unmarshal(raw, &out); err != nil {
			return err
		}
		printMemoryList(io.Stdout, out.Turn, out.Items)
		return nil
	}
}

// getItem fetches one item (with its R curve over the next curve turns
// when curve > 0).
func getItem(io IO, id string, curve int) (json.RawMessage, *memItem, *client, error) {
	c, _, err := dial(io)
	if err != nil {
		return nil, nil, nil, err
	}
	path := "/api/v1/memory/" + url.PathEscape(id)
	if curve > 0 {
		path += fmt.Sprintf("?curve=%d", curve)
	}
	var raw json.RawMessage
	if err := c.do("GET", path, nil, &raw); err != nil {
		return nil, nil, nil, err
	}
	var it memItem
	if err := json.Unmarshal(raw, &it); err != nil {
		return nil, nil, nil, err
	}
	return raw, &it, c, nil
}

func memoryShow(f *flags) run {
	asJSON := f.json()
	return func(io IO, args []string) error {
		raw, it, _, err := getItem(io, args[0], 0)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(io.Stdout, raw)
		}
		printMemoryItem(io.Stdout, it)
		return nil
	}
}

func memoryCurve(f *flags) run {
	turns := f.limit(40, 1000, "plot the next `N` turns")
	asJSON := f.json()
	return func(io IO, args []string) error {
		raw, it, _, err := getItem(io, args[0], *turns)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(io.Stdout, raw)
		}
		cfg, err := loadConfig(io)
		if err != nil {
			return err
		}
		plotCurve(io.Stdout, it, cfg)
		return nil
	}
}

func memoryForget(f *flags) run {
	asJSON := f.json()
	return func(io IO, args []string) error {
		c, _, err := dial(io)
		if err != nil {
			return err
		}
		var raw json.RawMessage
		if err := c.do("DELETE", "/api/v1/memory/"+url.PathEscape(args[0]), nil, &raw); err != nil {
			return err
		}
		if *asJSON {
			return printJSON(io.Stdout, raw)
		}
		fmt.Fprintf(io.Stdout, "deleted %s for good\n", args[0])
		return nil
	}
}

// printJSON prints a value (or raw JSON) indented.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func printMemoryList(w io.Writer, turn int64, items []memItem) {
	fmt.Fprintf(w, "turn %d, %d item(s)\n", turn, len(items))
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tR\tS\tLAST_T\tSTATE\tCONTENT")
	for _, it := range items {
		state := "held"
		switch {
		case it.Pinned:
			state = "pinned"
		case !it.InWorkspace:
			state = "let go"
		}
		if packets.Private(it.Origin.Kind) {
			state += " (private: " + it.Origin.Channel + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%.3f\t%.1f\t%d\t%s\t%s\n", it.ID, it.Kind, it.R, it.S, it.LastT, state, clipText(it.Content, 60))
	}
	tw.Flush()
}

func printMemoryItem(w io.Writer, it *memItem) {
	fmt.Fprintf(w, "%s (%s), from %s in %s (%s)\n%s\n\n", it.ID, it.Kind, orDash(it.Origin.Speaker), it.Origin.Channel, it.Origin.Kind, it.Content)
	if it.Summary != "" {
		fmt.Fprintf(w, "summary: %s\n", it.Summary)
	}
	if it.Original != "" {
		fmt.Fprintf(w, "compressed by active GC; original: %s\n", it.Original)
	}
	fmt.Fprintf(w, "R %.4f at turn %d   S %.3f   D %.1f   a %.2f   last_T %d   in workspace: %v   pinned: %v\n",
		it.R, it.Turn, it.S, it.D, it.A, it.LastT, it.InWorkspace, it.Pinned)
	if l := it.Last; l != nil {
		fmt.Fprintf(w, "last review: R %.4f → S %.3f after %d turns (D %.1f, a %.2f)\n", l.R, l.S, l.LastTDistance, l.D, l.A)
	}
	if it.Left != nil {
		fmt.Fprintf(w, "left the workspace at turn %d: %s\n", it.Left.Turn, it.Left.Reason)
	}
	if it.Until != nil {
		fmt.Fprintf(w, "held until %s; now %s holds\n", it.Until.Local().Format("2006-01-02 15:04"), it.SupersededBy)
	}
	if len(it.History) > 0 {
		fmt.Fprintf(w, "history (a changed fact, newest first):\n")
		for _, h := range it.History {
			until := "?"
			if h.Until != nil {
				until = h.Until.Local().Format("2006-01-02 15:04")
			}
			fmt.Fprintf(w, "  was %s (%s), until %s\n", h.Content, h.ID, until)
		}
	}
}

// plotCurve draws R over the coming turns, ten rows high, with the
// eviction threshold marked.
func plotCurve(w io.Writer, it *memItem, cfg *config.Config) {
	const rows = 10
	fmt.Fprintf(w, "%s: R over the next %d turns if unused (S %.2f, %s curve; evicted below %.2f)\n", it.ID, len(it.Curve)-1, it.S, cfg.Memory.Curve, cfg.Memory.EvictBelow)
	for row := rows; row >= 0; row-- {
		level := float64(row) / rows
		var b strings.Builder
		for _, r := range it.Curve {
			switch {
			case r >= level && r < level+1.0/rows:
				b.WriteByte('*')
			case cfg.Memory.EvictBelow >= level && cfg.Memory.EvictBelow < level+1.0/rows:
				b.WriteByte('-')
			default:
				b.WriteByte(' ')
			}
		}
		fmt.Fprintf(w, "%4.1f |%s\n", level, strings.TrimRight(b.String(), " "))
	}
	fmt.Fprintf(w, "     +%s\n      turn %d%*s\n", strings.Repeat("-", len(it.Curve)), it.Turn, len(it.Curve)-4, fmt.Sprintf("+%d", len(it.Curve)-1))
}

func clipText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
