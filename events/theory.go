package events

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/store"
	"github.com/dgraph-io/badger/v4"
)

// Theory is a theory packet: an article on a system of ideas and what it
// was drawn from. Only the current version exists: an update replaces the
// article, and what an older version held survives only as far as the new
// one kept it; related_info says what the current version drew on.
type Theory struct {
	ID          string    `json:"id"`
	Title       string    `json:"title"`
	Article     string    `json:"article"`
	RelatedInfo []Related `json:"related_info"`
	Version     int       `json:"version"`
	Created     time.Time `json:"created"`
	Updated     time.Time `json:"updated"`
	// Scope is whose knowledge it is (ScopeOf; nil before scopes existed:
	// the owner's).
	Scope *packets.Scope `json:"scope,omitempty"`
}

// Related is one source of a theory: a stored message (ref: its id), a line
// of another theory (ref: "theory-id:line", 1-based), or a file (ref: its
// path).
type Related struct {
	Kind string `json:"kind"` // message | theory_line | file
	Ref  string `json:"ref"`
}

// Bounds of a theory packet.
const (
	maxArticleRunes = 64000
	maxRelated      = 64
)

// CreateTheory stores a new theory of scope s.
func (l *Log) CreateTheory(title, article string, related []Related, s packets.Scope, now time.Time) (*Theory, error) {
	t := &Theory{ID: shortID("th", title, now.Format(time.RFC3339Nano)), Version: 1, Created: now, Updated: now, Scope: &s}
	return t, l.saveTheory(t, title, article, related, true)
}

// UpdateTheory replaces a theory's article (and its title, when not
// empty). related replaces what it drew on; nil keeps the list as it was.
func (l *Log) UpdateTheory(id, title, article string, related []Related, now time.Time) (*Theory, error) {
	t, err := l.Theory(id)
	if err != nil {
		return nil, err
	}
	if title == "" {
		title = t.Title
	}
	if related == nil {
		related = t.RelatedInfo
	}
	t.Version++
	t.Updated = now
	return t, l.saveTheory(t, title, article, related, false)
}

func (l *Log) saveTheory(t *Theory, title, article string, related []Related, create bool) error {
	title = cleanText(title, maxTitleRunes)
	switch {
	case title == "":
		return fmt.Errorf("%w: a theory needs a title", ErrInvalid)
	case strings.TrimSpace(article) == "":
		return fmt.Errorf("%w: a theory needs an article (the whole current version)", ErrInvalid)
	case utf8.RuneCountInString(article) > maxArticleRunes:
		return fmt.Errorf("%w: the article is over %d characters; shorten it", ErrInvalid, maxArticleRunes)
	case len(related) > maxRelated:
		return fmt.Errorf("%w: related_info has %d items; keep at most %d", ErrInvalid, len(related), maxRelated)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.db.Update(func(txn *badger.Txn) error {
		for i, r := range related {
			if err := l.checkRelated(txn, r); err != nil {
				return fmt.Errorf("related_info[%d]: %w", i, err)
			}
		}
		if create {
			if ok, err := exists(txn, theoryKey(t.ID)); err != nil || ok {
				if ok {
					return fmt.Errorf("%w: a theory with id %s exists; update it instead", ErrInvalid, t.ID)
				}
				return err
			}
		}
		t.Title, t.Article = title, article
		t.RelatedInfo = append([]Related{}, related...)
		return setJSON(txn, theoryKey(t.ID), t)
	})
	if err != nil {
		return fmt.Errorf("events: theory: %w", err)
	}
	return nil
}

// checkRelated makes sure a source exists.
func (l *Log) checkRelated(txn *badger.Txn, r Related) error {
	switch r.Kind {
	case "message":
		if _, err := l.st.Get(r.Ref); err != nil {
			return fmt.Errorf("%w: message %q: %v", ErrInvalid, r.Ref, err)
		}
	case "theory_line":
		id, n, ok := strings.Cut(r.Ref, ":")
		line, err := strconv.Atoi(n)
		if !ok || err != nil || line < 1 {
			return fmt.Errorf("%w: a theory_line ref is \"theory-id:line\" (line from 1), not %q", ErrInvalid, r.Ref)
		}
		var t Theory
		found, err := getJSON(txn, theoryKey(id), &t)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("%w: no theory %q", ErrInvalid, id)
		}
		if lines := strings.Count(t.Article, "\n") + 1; line > lines {
			return fmt.Errorf("%w: theory %s has %d lines, not %d", ErrInvalid, id, lines, line)
		}
	case "file":
		if r.Ref == "" || len(r.Ref) > 1024 || strings.ContainsFunc(r.Ref, unicode.IsControl) {
			return fmt.Errorf("%w: a file ref is a path of 1–1024 characters without control characters", ErrInvalid)
		}
	default:
		return fmt.Errorf("%w: kind %q is not message, theory_line or file", ErrInvalid, r.Kind)
	}
	return nil
}

// Theory returns one theory.
func (l *Log) Theory(id string) (*Theory, error) {
	t := new(Theory)
	var found bool
	err := l.db.View(func(txn *badger.Txn) error {
		var err error
		found, err = getJSON(txn, theoryKey(id), t)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("events: theory %s: %w", id, err)
	}
	if !found {
		return nil, fmt.Errorf("events: theory %q: %w (list them with the theory tool's list op)", id, ErrNotFound)
	}
	return t, nil
}

// Theories lists every theory, the most recently updated first.
func (l *Log) Theories() ([]*Theory, error) {
	out := []*Theory{}
	err := l.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(store.PrefixTheory), PrefetchValues: true})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			t := new(Theory)
			if err := it.Item().Value(func(b []byte) error { return json.Unmarshal(b, t) }); err != nil {
				return err
			}
			out = append(out, t)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("events: theories: %w", err)
	}
	slices.SortFunc(out, func(a, b *Theory) int { return b.Updated.Compare(a.Updated) })
	return out, nil
}
