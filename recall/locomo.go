package recall

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/importer"
	"github.com/cyan-agent/cyan/store"
)

// LoCoMoCategories names the LoCoMo question categories.
var LoCoMoCategories = map[int]string{1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}

// LoCoMoReport is recall@k over a LoCoMo file, in LoCoMo's dialog units.
type LoCoMoReport struct {
	Ks        []int
	Questions int
	// Overall[i] is the mean recall at Ks[i], ×100.
	Overall []float64
	// ByCategory[c][i] is the same over the questions of category c.
	ByCategory map[int][]float64
	Count      map[int]int
	// Messages imported and how long indexing and the queries took.
	Messages int
	Index    time.Duration
	Queries  time.Duration
}

// EvalLoCoMo imports each conversation of a LoCoMo file into its own
// channel of st, indexes it with x, and scores every question: retrieve
// for the question in its conversation's channel, flatten the ranked
// passages into turns (in passage order, each passage's turns in order),
// and count |evidence ∩ first k turns| / |evidence| (1 for a question
// without evidence).
func EvalLoCoMo(ctx context.Context, st *store.Store, x *Index, data []byte, ks []int) (*LoCoMoReport, error) {
	convs, err := importer.ParseLoCoMo(data, "")
	if err != nil {
		return nil, err
	}
	slices.Sort(ks)
	rep := &LoCoMoReport{Ks: ks, ByCategory: map[int][]float64{}, Count: map[int]int{}}
	began := time.Now()
	for _, c := range convs {
		for i := 0; i < len(c.Messages); i += 1000 {
			added, err := st.Import(c.Messages[i:min(i+1000, len(c.Messages))])
			if err != nil {
				return nil, err
			}
			rep.Messages += len(added)
		}
	}
	if err := x.Sync(ctx); err != nil {
		return nil, err
	}
	rep.Index = time.Since(began)
	kmax := ks[len(ks)-1]
	rep.Overall = make([]float64, len(ks))
	began = time.Now()
	for _, c := range convs {
		for _, q := range c.QA {
			turns, err := x.rankedTurns(ctx, q.Question, c.Channel, kmax)
			if err != nil {
				return nil, err
			}
			if rep.ByCategory[q.Category] == nil {
				rep.ByCategory[q.Category] = make([]float64, len(ks))
			}
			rep.Count[q.Category]++
			rep.Questions++
			for i, k := range ks {
				r := recallAt(turns, q.Evidence, k)
				rep.Overall[i] += r
				rep.ByCategory[q.Category][i] += r
			}
		}
	}
	rep.Queries = time.Since(began)
	for i := range ks {
		rep.Overall[i] = 100 * rep.Overall[i] / float64(max(rep.Questions, 1))
		for c, v := range rep.ByCategory {
			v[i] = 100 * v[i] / float64(max(rep.Count[c], 1))
		}
	}
	return rep, nil
}

// rankedTurns returns the external ids of the first k distinct messages of
// a search's flattened output.
func (x *Index) rankedTurns(ctx context.Context, prompt, channel string, k int) ([]string, error) {
	q := Query{Prompt: prompt, Channel: channel, MaxResults: MaxMaxResults}
	if err := q.check(); err != nil {
		return nil, err
	}
	r, err := x.search(ctx, q)
	if err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	for _, res := range r.Results {
		for _, e := range res.ExternalIDs {
			if !seen[e] && len(out) < k {
				seen[e] = true
				out = append(out, e)
			}
		}
	}
	return out, nil
}

func recallAt(turns, evidence []string, k int) float64 {
	if len(evidence) == 0 {
		return 1
	}
	top := turns[:min(k, len(turns))]
	n := 0
	for _, e := range evidence {
		if slices.Contains(top, e) {
			n++
		}
	}
	return float64(n) / float64(len(evidence))
}

// Print writes the report as a table.
func (r *LoCoMoReport) Print(w io.Writer, label string) {
	var head strings.Builder
	fmt.Fprintf(&head, "%-22s %9s", "LoCoMo recall@k", "questions")
	for _, k := range r.Ks {
		fmt.Fprintf(&head, " %7s", fmt.Sprintf("R@%d", k))
	}
	fmt.Fprintln(w, head.String())
	row := func(name string, n int, v []float64) {
		fmt.Fprintf(w, "%-22s %9d", name, n)
		for _, x := range v {
			fmt.Fprintf(w, " %7.1f", x)
		}
		fmt.Fprintln(w)
	}
	row(label, r.Questions, r.Overall)
	for c := 1; c <= 5; c++ {
		if v, ok := r.ByCategory[c]; ok {
			row(fmt.Sprintf("  %d %s", c, LoCoMoCategories[c]), r.Count[c], v)
		}
	}
	fmt.Fprintf(w, "%d turns imported and indexed in %s; %d queries in %s (%.2f ms each)\n",
		r.Messages, r.Index.Round(time.Millisecond), r.Questions, r.Queries.Round(time.Millisecond),
		float64(r.Queries.Microseconds())/1000/float64(max(r.Questions, 1)))
}
