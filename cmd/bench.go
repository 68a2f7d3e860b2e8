package cmd

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/cyan-agent/cyan/daemon"
	"github.com/cyan-agent/cyan/recall"
	"github.com/cyan-agent/cyan/store"
)

func runBench(io IO, args []string) error {
	if len(args) == 0 {
		return &usageError{msg: "name a benchmark: cyan bench locomo [--folds K] FILE, or cyan bench recall --messages N"}
	}
	switch args[0] {
	case "locomo":
		return benchLoCoMo(io, args[1:])
	case "recall":
		return benchRecall(io, args[1:])
	case "-h", "--help":
		fs := newFlags(io, "bench")
		fs.Usage()
		return nil
	}
	return &usageError{msg: fmt.Sprintf("unknown benchmark %q; use locomo or recall", args[0])}
}

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

// benchLoCoMo scores recall on a LoCoMo file in a scratch store: offline,
// with the built-in embedder unless --embedder config asks for the
// configured one.
func benchLoCoMo(io IO, args []string) error {
	fs := newFlags(io, "bench")
	ksFlag := fs.String("k", "5,10,25,50", "the `list` of k to report recall@k at")
	embedder := fs.String("embedder", "builtin", "`builtin`, or config to use the configured embedder")
	index := fs.String("index", "flat", "vector `index`: flat or chromem")
	folds := fs.Int("folds", 0, "cross-validate the ranking's knobs over `K` folds by conversation (tuned on the others, measured on each); 0 scores the shipped settings")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return &usageError{msg: "name the LoCoMo file; try: cyan bench locomo locomo-dev.json"}
	}
	ks, err := parseKs(*ksFlag)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(pos[0])
	if err != nil {
		return fmt.Errorf("%w (check the path)", err)
	}
	var emb recall.Embedder = recall.HashEmbedder{}
	switch *embedder {
	case "builtin":
	case "config":
		cfg, err := loadConfig(io)
		if err != nil {
			return err
		}
		if emb, err = daemon.Embedder(cfg.Embed, nil); err != nil {
			return err
		}
	default:
		return &usageError{msg: fmt.Sprintf("--embedder %q is not builtin or config", *embedder)}
	}
	if *folds != 0 {
		mk := func() recall.Embedder { return emb }
		rep, err := recall.LoCoMoCV(context.Background(), data, recall.LoCoMoCVOptions{Folds: *folds, Ks: ks, Embedder: mk})
		if err != nil {
			return err
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
	rep.Print(io.Stdout, emb.ID())
	return nil
}

func benchRecall(io IO, args []string) error {
	fs := newFlags(io, "bench")
	n := fs.Int("messages", 100000, "how many synthetic `messages` to index")
	queries := fs.Int("queries", 500, "how many `queries` to time")
	kinds := fs.String("index", "flat", "vector `indexes` to measure, comma-separated: flat,chromem")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if *n < 1 {
		return &usageError{msg: "--messages must be at least 1"}
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
	rep, err := recall.Bench(context.Background(), recall.BenchOptions{Dir: dir, Messages: *n, Queries: *queries, Kinds: ks}, io.Stderr)
	if err != nil {
		return err
	}
	rep.Print(io.Stdout)
	return nil
}
