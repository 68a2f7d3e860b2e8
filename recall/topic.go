package recall

import (
	"context"
	"slices"
	"strings"
	"time"
)

// Topic matching: the records (theories) that what is being talked about
// touches, found without being asked for — the seed's "a theory relevant
// to the matter at hand becomes context of that topic". It searches the
// records' side of the index as Search does (words, and meaning when
// vectors are on), under the same channel and owner filter, and keeps a
// record only when it shares enough words with the talk: a search ranks
// records by the share of the query's known words they hold, so one
// common word ("june", the month every record of June is indexed under)
// would otherwise bring in every record that has it.

// Match is a record that fits a topic.
type Match struct {
	Kind   string  `json:"kind"`
	ID     string  `json:"id"`
	Source string  `json:"source"` // "theory <title>"
	Score  float64 `json:"score"`  // its best part's search score, 0–100
	// Shared are the index terms (stemmed words, CJK bigrams) the talk and
	// the record's text have in common, the rarest among the records first.
	Shared []string `json:"shared"`
}

// MatchQuery is a topic to match.
type MatchQuery struct {
	Text    string // the topic's messages (at most MaxPromptBytes are read)
	Kind    string // the kind of records: packets.RecordTheory
	Channel string // the conversation; its filter is Query's
	Owner   bool   // the owner in private (Query.Owner)
	// MinScore and MinShared are the bar: a record's best part must score
	// at least MinScore and share at least MinShared distinct terms with
	// the text (0: DefaultMatchScore, DefaultMatchShared).
	MinScore  float64
	MinShared int
	Limit     int // the most matches (0: 3)
}

// The defaults of a MatchQuery's bar.
const (
	DefaultMatchScore  = 20.0
	DefaultMatchShared = 2
)

// matchEmbedTimeout bounds embedding a topic: matching runs while a
// turn's prompt is assembled, so a slow embedder falls back to words.
const matchEmbedTimeout = 2 * time.Second

// MatchRecords finds the records of q.Kind that q.Text touches, best
// first, each once (by its best part). Records changed since the last
// rebuild are indexed first, so a theory matches as soon as it is written.
func (x *Index) MatchRecords(ctx context.Context, q MatchQuery) ([]Match, error) {
	text := strings.TrimSpace(q.Text)
	if len(text) > MaxPromptBytes {
		text = strings.ToValidUTF8(text[len(text)-MaxPromptBytes:], "")
	}
	if text == "" {
		return nil, ctx.Err()
	}
	x.syncIfBehind(ctx)
	if x.recordCount() == 0 {
		return nil, ctx.Err()
	}
	if q.MinScore <= 0 {
		q.MinScore = DefaultMatchScore
	}
	if q.MinShared <= 0 {
		q.MinShared = DefaultMatchShared
	}
	if q.Limit <= 0 {
		q.Limit = 3
	}
	terms := x.c.stems.tokens(text)
	ectx, cancel := context.WithTimeout(ctx, matchEmbedTimeout)
	qv := x.queryVector(ectx, text, &Response{})
	cancel()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ri := x.recs.Load()
	if ri == nil {
		return nil, nil
	}
	parts := x.searchRecords(Query{Channel: q.Channel, Owner: q.Owner, MaxResults: MaxMaxResults, ScoreThreshold: q.MinScore}, terms, qv)
	talk := map[string]bool{}
	for _, t := range terms {
		talk[t] = true
	}
	byKey := map[string]int{}
	for i := range ri.docs {
		byKey[ri.docs[i].key()] = i
	}
	var out []Match
	seen := map[string]bool{}
	for _, p := range parts {
		if p.Kind != q.Kind || seen[p.ID] {
			continue
		}
		i, ok := byKey[p.key]
		if !ok {
			continue
		}
		d := &ri.docs[i]
		// The record's own words: its title and the part's text, not the
		// month it is indexed under.
		shared := sharedTerms(talk, x.c.stems.tokens(d.rec.Source+" "+d.text))
		if len(shared) < q.MinShared {
			continue
		}
		seen[p.ID] = true
		slices.SortStableFunc(shared, func(a, b string) int { return len(ri.lex.posts[ri.lex.terms[a]]) - len(ri.lex.posts[ri.lex.terms[b]]) })
		out = append(out, Match{Kind: p.Kind, ID: p.ID, Source: p.Source, Score: p.Score, Shared: shared[:min(len(shared), 8)]})
		if len(out) == q.Limit {
			break
		}
	}
	return out, nil
}

// sharedTerms lists the distinct terms of rec that talk holds, in rec's
// order; the word "theory" of a theory's source is not one.
func sharedTerms(talk map[string]bool, rec []string) []string {
	var out []string
	for _, t := range rec {
		if talk[t] && t != "theori" && t != "theory" && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}
