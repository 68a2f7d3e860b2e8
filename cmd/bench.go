package cmd

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"

	"github.com/cyan-agent/cyan/daemon"
	"github.com/cyan-agent/cyan/internal/embedtest"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/recall"
	"github.com/cyan-agent/cyan/store"
)

func parseKs(s string) ([]int, error) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || k < 1 {
			return nil, &usageError{msg: fmt.Sprintf("--k %q is not a list of positive numbers like 5,10,25,50", s)}
		}
		out = append(out, k)
	}
	return out, nil
}

const benchLoCoMoMore = `It imports each conversation of a LoCoMo file into its own channel of a
scratch store, indexes it, and scores every question: |evidence ∩ first k
turns| / |evidence|, the mean ×100. --k is the list of k of recall@k (a
parameter of the metric, not a "how many"). The file: the LoCoMo dataset
(Maharana et al., 2024), locomo10.json of github.com/snap-research/locomo.`

// benchLoCoMo scores recall on a LoCoMo file in a scratch store: offline,
// with the built-in embedder unless --embedder config asks for the
// configured one.
func benchLoCoMo(f *flags) run {
	ksFlag := f.String("k", "5,10,25,50", "the `list` of k to report recall@k at")
	embedder := f.String("embedder", "builtin", "the `embedder`: builtin (GloVe word vectors), hash (the hashed-words embedder, for comparison), or config to use the configured one")
	index := f.String("index", "flat", "vector `index`: flat or chromem")
	folds := f.Int("folds", 0, "cross-validate the ranking's knobs over `K` folds by conversation (tuned on the others, measured on each); 0 scores the shipped settings")
	asJSON := f.json()
	return func(io IO, pos []string) error {
		ks, err := parseKs(*ksFlag)
		if err != nil {
			return err
		}
		var emb recall.Embedder = recall.GloveEmbedder{}
		switch *embedder {
		case "builtin":
		case "hash":
			emb = recall.HashEmbedder{}
		case "config":
			cfg, err := loadConfig(io)
			if err != nil {
				return err
			}
			if emb, err = daemon.Embedder(cfg.Embed, nil); err != nil {
				return err
			}
		default:
			return &usageError{msg: fmt.Sprintf("--embedder %q is not builtin, hash or config", *embedder)}
		}
		data, err := os.ReadFile(pos[0])
		if err != nil {
			return badInput("%w (check the path; docs/memory.md says where LoCoMo files come from)", err)
		}
		if *folds != 0 {
			mk := func() recall.Embedder { return emb }
			rep, err := recall.LoCoMoCV(context.Background(), data, recall.LoCoMoCVOptions{Folds: *folds, Ks: ks, Embedder: mk})
			if err != nil {
				return err
			}
			if *asJSON {
				return printJSON(io.Stdout, map[string]any{"embedder": emb.ID(), "report": rep})
			}
			rep.Print(io.Stdout, emb.ID())
			return nil
		}
		dir, err := os.MkdirTemp("", "cyan-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		st, err := store.Open(store.Options{Dir: dir})
		if err != nil {
			return err
		}
		defer st.Close()
		x, err := recall.New(recall.Options{Store: st, Embedder: emb, IndexKind: *index})
		if err != nil {
			return err
		}
		rep, err := recall.EvalLoCoMo(context.Background(), st, x, data, ks)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(io.Stdout, map[string]any{"embedder": emb.ID(), "report": rep})
		}
		rep.Print(io.Stdout, emb.ID())
		return nil
	}
}

func benchRecall(f *flags) run {
	n := f.Int("messages", 100000, "how many synthetic `messages` to index (the workload's size)")
	queries := f.Int("queries", 500, "how many `queries` to time")
	kinds := f.String("index", "flat", "vector `indexes` to measure, comma-separated: flat,chromem")
	memoryMB := f.Int("memory-mb", 0, "the store's memory_mb, in `megabytes` (0: the default)")
	dims := f.Int("model-dims", 0, "embed with a model of `N` dimensions (the fake embedding server, in this process) instead of the built-in embedder; 0: built-in")
	profile := f.String("profile", "", "write CPU and heap profiles of the import and the restart, the heap after each phase and a resident-memory timeline (rss.tsv) into `dir`")
	settle := f.Duration("settle", recall.DefaultSettleIdle, "how long the restarted store must run no compaction before its steady memory is read")
	asJSON := f.json()
	return func(io IO, _ []string) error {
		if *n < 1 {
			return &usageError{msg: "--messages must be at least 1"}
		}
		if *queries < 1 {
			return &usageError{msg: "--queries must be at least 1"}
		}
		if *settle <= 0 {
			return &usageError{msg: "--settle must be above 0 (the store's idle time before the steady memory is read)"}
		}
		var ks []string
		for _, k := range strings.Split(*kinds, ",") {
			k = strings.TrimSpace(k)
			if k != recall.IndexFlat && k != recall.IndexChromem {
				return &usageError{msg: fmt.Sprintf("--index %q: each must be flat or chromem", *kinds)}
			}
			ks = append(ks, k)
		}
		dir, err := os.MkdirTemp("", "cyan-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		var emb recall.Embedder
		if *dims != 0 {
			if *dims < 8 || *dims > 8192 {
				return &usageError{msg: "--model-dims must be 8–8192 (or 0 for the built-in embedder)"}
			}
			model := fmt.Sprintf("bench-embed-%d", *dims)
			srv := httptest.NewServer(&embedtest.Server{Dims: *dims, Models: []string{model}, Forget: true})
			defer srv.Close()
			e, err := llm.NewEmbedder(llm.EmbedOptions{Provider: "ollama", BaseURL: srv.URL, Model: model})
			if err != nil {
				return err
			}
			emb = recall.NewModelEmbedder(e, "ollama", model)
		}
		rep, err := recall.Bench(context.Background(), recall.BenchOptions{Dir: dir, Messages: *n, Queries: *queries, Kinds: ks, MemoryMB: *memoryMB, Embedder: emb, ProfileDir: *profile, SettleIdle: *settle}, io.Stderr)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(io.Stdout, rep)
		}
		rep.Print(io.Stdout)
		return nil
	}
}
