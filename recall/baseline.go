package recall

import (
	"strings"
	"unicode"

	"github.com/cyan-agent/cyan/importer"
)

// bm25Baseline is the LoCoMo data's own BM25 reference, the floor no
// category may fall under: each conversation indexed alone, the text
// `<speaker> said, "<text>"` with the image caption, lower-cased words
// without stemming, stop words removed, k1 1.5, b 0.75.
func bm25Baseline(convs []importer.Conversation, ks []int) CVRow {
	row := CVRow{Overall: make([]float64, len(ks)), ByCategory: map[int][]float64{}, Count: map[int]int{}}
	kmax := ks[len(ks)-1]
	for _, c := range convs {
		lex := newLexicon()
		ids := make([]string, 0, len(c.Messages))
		for _, m := range c.Messages {
			lex.add(uint32(len(ids)), plainWords(m.User+` said, "`+m.Text+`"`))
			ids = append(ids, m.ExternalID)
		}
		for _, qa := range c.QA {
			hits, _ := lex.search(plainWords(qa.Question), kmax, nil, nil, 1.5, 0.75, nil)
			turns := make([]string, len(hits))
			for i, h := range hits {
				turns[i] = ids[h.doc]
			}
			if row.ByCategory[qa.Category] == nil {
				row.ByCategory[qa.Category] = make([]float64, len(ks))
			}
			row.Count[qa.Category]++
			row.Questions++
			for j, k := range ks {
				r := recallAt(turns, qa.Evidence, k)
				row.Overall[j] += r
				row.ByCategory[qa.Category][j] += r
			}
		}
	}
	for j := range ks {
		row.Overall[j] = 100 * row.Overall[j] / float64(max(row.Questions, 1))
		for c, v := range row.ByCategory {
			v[j] = 100 * v[j] / float64(max(row.Count[c], 1))
		}
	}
	return row
}

// plainWords splits text into lower-cased words of letters and digits,
// stop words dropped, nothing stemmed.
func plainWords(text string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if !stopWords[w] {
			out = append(out, w)
		}
	}
	return out
}
