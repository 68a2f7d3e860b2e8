package recall

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Kinds: a question that names a class ("What instruments does Melanie
// play?", "Which European countries has Maria visited?") is answered by
// lines that name its members ("playing my violin", "Spain was
// amazing"), which share no word with it and, in GloVe's space, little
// meaning. The compiled-in table (recall/internal/kindsgen, from
// WordNet's noun hierarchy) lists for a noun of one or two words the
// words that name kinds of it; gather looks up the class the question
// asks for (classPhrase), keeps the kinds nearest the question in
// GloVe's space and runs one more BM25 search for them, a feature rank
// weighs with the kinds knob (params.kinds). English only: a question
// in another language names no class this way.

//go:embed kinds.txt.gz
var kindsTableGz []byte

// kindsOnce reads the compiled-in table once, on the first question that
// needs it; it is never written after.
var kindsOnce = sync.OnceValues(func() (*kindsTable, error) {
	return readKindsTable(kindsTableGz, kindsTableSHA256)
})

// kindsTable maps a head (its words' stems, joined by a space) to the
// stems of its kinds.
type kindsTable struct {
	heads map[string][]kindTerm
}

// kindTerm is a kind's stem and its word's place in the GloVe table.
type kindTerm struct {
	term string
	word int32
}

// minKindCos is the least GloVe cosine a kind must have with the
// question to be searched for: WordNet lists every sense of a head
// ("law" is a kind of instrument, a legal one), and the question's
// other words tell which one it means ("play").
const minKindCos = 0.3

// maxKinds bounds the kinds searched for per question, the closest to
// the question first.
const maxKinds = 32

// readKindsTable checks gz against its SHA-256 and decodes it (the
// layout is in recall/internal/kindsgen), stemming heads and kinds as
// Tokenize does; a kind the GloVe table lacks is dropped, having no
// vector to measure it with.
func readKindsTable(gz []byte, sum string) (*kindsTable, error) {
	g, err := gloveTableOnce()
	if err != nil {
		return nil, err
	}
	got := sha256.Sum256(gz)
	if hex.EncodeToString(got[:]) != sum {
		return nil, errors.New("recall: the kinds table does not match its checksum")
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("recall: kinds table: %w", err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	if !sc.Scan() || sc.Text() != "cyankinds1" {
		return nil, errors.New("recall: kinds table: not a table")
	}
	t := &kindsTable{heads: map[string][]kindTerm{}}
	known := map[string]kindTerm{} // each word is stemmed once
	for sc.Scan() {
		head, list, ok := strings.Cut(sc.Text(), "\t")
		if !ok {
			return nil, fmt.Errorf("recall: kinds table: bad line %q", sc.Text())
		}
		hw := strings.Fields(head)
		for i, w := range hw {
			hw[i] = stem(w)
		}
		var kinds []kindTerm
		for _, w := range strings.Fields(list) {
			k, ok := known[w]
			if !ok {
				i, in := g.index[w]
				if !in {
					continue
				}
				k = kindTerm{term: stem(w), word: i}
				known[w] = k
			}
			kinds = append(kinds, k)
		}
		if len(kinds) > 0 {
			key := strings.Join(hw, " ")
			t.heads[key] = append(t.heads[key], kinds...)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("recall: kinds table: %w", err)
	}
	return t, nil
}

// classPhrase returns the stems of the class a question asks for: the
// words after its first "what" or "which" (and "kind of", "types of"), up to
// the next function word, at most three ("What European countries has…"
// → "european countri"; "What instruments does…" → "instrument"). Other
// questions name no class: their nouns are what they ask about, which
// BM25 finds.
func classPhrase(prompt string) []string {
	words := strings.FieldsFunc(strings.ToLower(prompt), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r == '-')
	})
	var phrase []string
	for i := 0; i < len(words); i++ {
		if words[i] != "what" && words[i] != "which" {
			continue
		}
		j := i + 1
		if j+1 < len(words) && words[j+1] == "of" {
			switch words[j] {
			case "kind", "kinds", "type", "types", "sort", "sorts":
				j += 2
			}
		}
		for ; j < len(words) && len(phrase) < 3 && !stopWords[words[j]] && len(words[j]) <= 64; j++ {
			phrase = append(phrase, stem(words[j]))
		}
		break
	}
	return phrase
}

// questionKinds returns the terms to search for the kinds of the class
// a question asks for, nil when it asks for none, and how many words
// name the class; terms are the question's own (Tokenize), which no kind
// repeats. The table is read on the first question that asks
// for a class.
func questionKinds(prompt string, terms []string) (kinds []string, classWords int) {
	phrase := classPhrase(prompt)
	if len(phrase) == 0 {
		return nil, 0
	}
	t, err := kindsOnce()
	if err != nil {
		return nil, 0
	}
	return t.kindsOf(prompt, phrase, terms), len(phrase)
}

// kindsOf returns the kinds of phrase's heads, the closest to the
// question (by GloVe cosine) first: a pair of words that is a head is
// used instead of each word alone. A kind the question already names is
// left out.
func (t *kindsTable) kindsOf(prompt string, phrase, terms []string) []string {
	g, err := gloveTableOnce() // read before t was
	if err != nil {
		return nil
	}
	qv := make([]float32, g.dims)
	if g.vector(prompt, qv) == 0 {
		return nil
	}
	asked := map[string]bool{}
	for _, q := range terms {
		asked[q] = true
	}
	type near struct {
		term string
		cos  float32
	}
	var list []near
	seen := map[string]bool{}
	add := func(ks []kindTerm) {
		for _, k := range ks {
			if asked[k.term] || seen[k.term] {
				continue
			}
			seen[k.term] = true
			if c := g.wordCos(k.word, qv); c >= minKindCos {
				list = append(list, near{k.term, c})
			}
		}
	}
	for i := 0; i < len(phrase); i++ {
		if i+1 < len(phrase) {
			if ks, ok := t.heads[phrase[i]+" "+phrase[i+1]]; ok {
				add(ks)
				i++
				continue
			}
		}
		add(t.heads[phrase[i]])
	}
	slices.SortStableFunc(list, func(a, b near) int { return cmp.Compare(b.cos, a.cos) })
	out := make([]string, 0, min(len(list), maxKinds))
	for _, n := range list[:min(len(list), maxKinds)] {
		out = append(out, n.term)
	}
	return out
}
