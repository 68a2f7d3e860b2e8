package recall

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// DRAGON is the LoCoMo paper's dense retriever (Table 3, dialog units,
// all ten conversations): the bar at k = 5, 10, 25, 50.
var DRAGON = map[int]float64{5: 58.8, 10: 67.5, 25: 79.9, 50: 84.8}

// Below lists what falls short: overall recall under DRAGON at a k where
// it has a number, and a category under the BM25 floor.
func (r *CVReport) Below() []string {
	var out []string
	for j, k := range r.Ks {
		if d, ok := DRAGON[k]; ok && r.Pooled.Overall[j] < d {
			out = append(out, fmt.Sprintf("R@%d %.1f is under DRAGON's %.1f", k, r.Pooled.Overall[j], d))
		}
	}
	for c := 1; c <= 5; c++ {
		v, ok := r.Pooled.ByCategory[c]
		if !ok {
			continue
		}
		for j, k := range r.Ks {
			if f := r.BM25.ByCategory[c][j]; v[j] < f {
				out = append(out, fmt.Sprintf("%s R@%d %.1f is under BM25's %.1f", LoCoMoCategories[c], k, v[j], f))
			}
		}
	}
	return out
}

// Print writes the report as tables.
func (r *CVReport) Print(w io.Writer, embedder string) {
	head := func(first string, width int) {
		fmt.Fprintf(w, "%-*s %9s", width, first, "questions")
		for _, k := range r.Ks {
			fmt.Fprintf(w, " %6s", fmt.Sprintf("R@%d", k))
		}
		fmt.Fprintln(w)
	}
	row := func(name string, width, n int, v []float64) {
		fmt.Fprintf(w, "%-*s %9s", width, name, count(n))
		for _, x := range v {
			fmt.Fprintf(w, " %6.1f", x)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "LoCoMo recall@k, %d-fold cross-validation by conversation, %s\n", len(r.Folds), embedder)
	fmt.Fprintln(w, "(each fold's knobs tuned on the other folds' conversations only)")
	fmt.Fprintln(w)
	const wide = 34
	head("held-out fold", wide)
	for i, f := range r.Folds {
		row(fmt.Sprintf("%d: %s", i+1, strings.Join(f.HeldOut, ",")), wide, f.Row.Questions, f.Row.Overall)
	}
	for i, f := range r.Folds {
		fmt.Fprintf(w, "  fold %d tuned: %s\n", i+1, f.Setting)
	}
	fmt.Fprintln(w)
	head("overall", wide)
	row("cross-validated (held-out, pooled)", wide, r.Pooled.Questions, r.Pooled.Overall)
	row("  mean over folds", wide, 0, r.FoldMean)
	row("  standard deviation over folds", wide, 0, r.FoldSD)
	row("  worst fold", wide, 0, r.FoldMin)
	row("in-sample (shows the gap only)", wide, r.InSample.Questions, r.InSample.Overall)
	var dragon []float64
	for _, k := range r.Ks {
		dragon = append(dragon, DRAGON[k])
	}
	row("DRAGON (LoCoMo paper)", wide, 0, dragon)
	row("BM25 (the data's baseline)", wide, r.BM25.Questions, r.BM25.Overall)
	row("before (previous parts, held-out)", wide, r.Before.Questions, r.Before.Overall)
	shipped := "the shipped defaults"
	if !r.Shipped {
		shipped = "NOT the shipped defaults"
	}
	fmt.Fprintf(w, "  in-sample tuned: %s (%s)\n", r.InSampleS, shipped)
	fmt.Fprintf(w, "  before: the same folds and procedure without %s (the previous release's ranking)\n", strings.Join(r.BeforeOff, ", "))
	fmt.Fprintln(w)
	head("category: cross-validated / BM25", wide)
	for c := 1; c <= 5; c++ {
		v, ok := r.Pooled.ByCategory[c]
		if !ok {
			continue
		}
		row(fmt.Sprintf("%d %s", c, LoCoMoCategories[c]), wide, r.Pooled.Count[c], v)
		row("    BM25 floor", wide, 0, r.BM25.ByCategory[c])
		row("    in-sample", wide, 0, r.InSample.ByCategory[c])
		row("    before (held-out)", wide, 0, r.Before.ByCategory[c])
	}
	fmt.Fprintln(w)
	if r.HarshSplits > 0 {
		head(fmt.Sprintf("harsher: tuned on %d, %d splits", r.HarshTrain, r.HarshSplits), wide)
		row("all held-out, now", wide, 0, r.Harsh.Overall)
		row("all held-out, before", wide, 0, r.HarshBefore.Overall)
		for c := 1; c <= 5; c++ {
			v, ok := r.Harsh.ByCategory[c]
			if !ok {
				continue
			}
			row(fmt.Sprintf("%d %s, now", c, LoCoMoCategories[c]), wide, 0, v)
			row("    before", wide, 0, r.HarshBefore.ByCategory[c])
		}
		fmt.Fprintf(w, "(each split tunes on %d conversations and is measured on all the others; every held-out question of every split counts once)\n", r.HarshTrain)
		fmt.Fprintln(w)
	}
	head("ablation (cross-validated)", wide)
	row("all parts, tuned", wide, r.Pooled.Questions, r.Pooled.Overall)
	for _, k := range knobs {
		if k.Tuned {
			a := r.Ablation[ablationName(k)]
			row(ablationName(k), wide, a.Questions, a.Overall)
		}
	}
	for _, k := range knobs {
		if !k.Tuned {
			a := r.Ablation[ablationName(k)]
			row(ablationName(k), wide, a.Questions, a.Overall)
		}
	}
	a := r.Ablation["none"]
	row("none: BM25 alone (b 0.75, k1 1.2)", wide, a.Questions, a.Overall)
	fmt.Fprintln(w)
	fmt.Fprintf(w, "indexes and searches built once in %s; all tuning in %s (%d settings scored on one conversation)\n",
		r.Index.Round(time.Millisecond), r.Tuning.Round(time.Millisecond), r.Evals)
	if below := r.Below(); len(below) > 0 {
		fmt.Fprintf(w, "short of the bar: %s\n", strings.Join(below, "; "))
	} else {
		fmt.Fprintln(w, "at or above DRAGON at every k, and every category at or above the BM25 floor")
	}
}

func count(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprint(n)
}
