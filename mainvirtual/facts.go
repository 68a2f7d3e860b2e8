package mainvirtual

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/dgraph-io/badger/v4"

	"github.com/cyan-agent/cyan/store"
)

// facts keeps what a model's answers showed about it, so that a restart
// does not learn it again the hard way. Its key space is
// store.PrefixModelFacts, one key a fact, by the LLM client's identity
// (llm.Client.Describe: provider, endpoint and model), so another model or
// another server starts unknown:
//
//	mdl\x00 <describe> \x00 thinks → "true": an answer had a bare
//	                                  "</think>" (MainVirtual.thinks);
//	                                  "false": a whole answer had none
//	                                  (MainVirtual.plain)
//	mdl\x00 <describe> \x00 window → windowFact JSON: the window a
//	                                  context-length error stated
//	                                  (assembler.learned)
//
// Facts are read once, by New; each is written when it changes. A failed
// write is logged and the turn goes on (the fact is then learned again
// after a restart, as before); a value that cannot be read is logged and
// ignored (the fact starts unknown).
type facts struct {
	store *store.Store
	model string
	log   *slog.Logger
}

// Fact names.
const (
	factThinks = "thinks"
	factWindow = "window"
)

// windowFact is a learned window, with what the window function
// (Options.Window) read when the server's error taught it (0: nothing, or
// only an assumed window). Once the window function reads another window,
// not 0, the server's was changed (a larger num_ctx, n_ctx,
// max_model_len, or llm.context_window set) and the learned one is
// forgotten: a persisted window must not hold the prompt small after the
// owner raised the server's.
type windowFact struct {
	Tokens   int `json:"tokens"`
	Reported int `json:"reported,omitempty"`
}

func (f *facts) key(name string) []byte {
	k := make([]byte, 0, len(store.PrefixModelFacts)+len(f.model)+1+len(name))
	k = append(k, store.PrefixModelFacts...)
	k = append(k, f.model...)
	k = append(k, 0)
	return append(k, name...)
}

// get reads a fact's value; nil when it is not stored or cannot be read.
func (f *facts) get(name string) []byte {
	var v []byte
	err := f.store.DB().View(func(txn *badger.Txn) error {
		it, err := txn.Get(f.key(name))
		if err != nil {
			return err
		}
		v, err = it.ValueCopy(nil)
		return err
	})
	if err != nil && !errors.Is(err, badger.ErrKeyNotFound) {
		f.log.Warn("read a model fact", "model", f.model, "fact", name, "err", err)
	}
	return v
}

// load reads the facts stored for the model: whether its template opens
// its reasoning (thinks), or is known not to (plain; neither: unknown).
func (f *facts) load() (thinks, plain bool, window windowFact) {
	if v := f.get(factThinks); v != nil {
		b, err := strconv.ParseBool(string(v))
		if err != nil {
			f.log.Warn("a model fact cannot be read; ignored", "model", f.model, "fact", factThinks, "value", string(v))
		} else {
			thinks, plain = b, !b
		}
	}
	if v := f.get(factWindow); v != nil {
		if err := json.Unmarshal(v, &window); err != nil || window.Tokens <= 0 || window.Reported < 0 {
			f.log.Warn("a model fact cannot be read; ignored", "model", f.model, "fact", factWindow, "value", string(v))
			window = windowFact{}
		}
	}
	return thinks, plain, window
}

// put stores a fact's value (nil deletes it); a failure is logged.
func (f *facts) put(name string, v []byte) {
	err := f.store.DB().Update(func(txn *badger.Txn) error {
		if v == nil {
			return txn.Delete(f.key(name))
		}
		return txn.Set(f.key(name), v)
	})
	if err != nil {
		f.log.Warn("keep a model fact", "model", f.model, "fact", name, "err", err)
	}
}

func (f *facts) putThinks(v bool) { f.put(factThinks, strconv.AppendBool(nil, v)) }

func (f *facts) putWindow(w windowFact) {
	if w.Tokens <= 0 {
		f.put(factWindow, nil)
		return
	}
	b, err := json.Marshal(w)
	if err != nil {
		f.log.Warn("keep a model fact", "model", f.model, "fact", factWindow, "err", fmt.Errorf("encode: %w", err))
		return
	}
	f.put(factWindow, b)
}
