package mainvirtual

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/turn"
)

// The window's margins: a share kept back because the server counts with
// its own tokenizer, and the answer's reserve when llm.max_tokens is not
// set (an eighth of the window, within these bounds).
const (
	windowMargin = 0.92
	minReserve   = 256
	maxReserve   = 2048
	// minContext is the least the conversation gets before sections are
	// left out: room for the incoming message and a few before it.
	minContext = 600
)

// shedOrder is what leaves the system prompt, in order, when the window
// is too small for it and the conversation's least: the pulled info,
// then the lorebook, then the persona's style examples.
var shedOrder = []turn.Slot{turn.SlotPulled, turn.SlotLoreAfter, turn.SlotLoreBefore, turn.SlotReference}

// windowInfo is the server's window as the assembler sees it.
type windowInfo struct {
	tokens int
	source string
}

// serverWindow is the smaller of what the window function says and what
// a server's error taught (0: unknown). A taught window is forgotten once
// the window function reads another window, not 0, than it did when the
// error came (windowFact); a window it assumed (an Ollama model not
// loaded yet) is no reading, so a server whose model comes and goes does
// not make the taught window come and go.
func (a *assembler) serverWindow(ctx context.Context) windowInfo {
	var w windowInfo
	read := false
	if a.window != nil {
		lw := a.window(ctx)
		w = windowInfo{lw.Tokens, lw.Source}
		read = lw.Tokens > 0 && !lw.Assumed
	}
	a.learnMu.Lock()
	if read {
		a.reported = w.tokens
		if a.learned.Tokens > 0 && a.learned.Reported != w.tokens {
			a.log.Info("the server's window changed since its context-length error; that error's window is forgotten",
				"learned", a.learned.Tokens, "then", a.learned.Reported, "now", w.tokens)
			a.learned = windowFact{}
			a.facts.putWindow(a.learned)
		}
	}
	learned := a.learned.Tokens
	a.learnMu.Unlock()
	if learned > 0 && (w.tokens == 0 || learned < w.tokens) {
		w = windowInfo{learned, "the server's context-length error"}
	}
	return w
}

// reserve is the answer's share of a window.
func (a *assembler) reserve(window int) int {
	if a.maxTokens > 0 {
		return a.maxTokens
	}
	return min(max(window/8, minReserve), maxReserve)
}

// fitWindow decides the conversation's budget and the sections to leave
// out so that the prompt fits the server's window (and capTokens, when
// above 0). nil: no window is known and nothing bounds the prompt.
func (a *assembler) fitWindow(ctx context.Context, p *turn.Packet, capTokens int) *turn.WindowTrace {
	w := a.serverWindow(ctx)
	if w.tokens <= 0 && capTokens <= 0 {
		return nil
	}
	tr := &turn.WindowTrace{Tokens: w.tokens, Source: w.source}
	limit := capTokens
	if w.tokens > 0 {
		tr.Reserve = a.reserve(w.tokens)
		byWindow := int(float64(w.tokens)*windowMargin) - tr.Reserve
		if limit <= 0 || byWindow < limit {
			limit = byWindow
		}
	}
	tr.Limit = limit
	fixed := p.ToolTokens + sectionsTokens(p.Sections, nil)
	room := limit - fixed
	for _, slot := range shedOrder {
		if room >= min(minContext, a.context) {
			break
		}
		for i := range p.Sections {
			st := &p.Sections[i]
			if st.Slot != slot || st.Tokens == 0 {
				continue
			}
			room += st.Tokens + titleTokens
			tr.Left = append(tr.Left, slot)
			st.Note = joinNote(st.Note, fmt.Sprintf("left out: %d tokens did not fit the server's window of %d with the tools and the conversation", st.Tokens, w.tokens))
			st.Tokens, st.Clipped = 0, true
		}
	}
	tr.Context = min(a.context, max(room, lineOverhead*2))
	switch {
	case tr.Context < a.context || len(tr.Left) > 0:
		tr.Note = fmt.Sprintf("the prompt may use %d tokens of the server's window of %d (%s; %d kept for the answer); the system prompt takes %d and the tools' schemas %d",
			limit, w.tokens, w.source, tr.Reserve, fixed-p.ToolTokens, p.ToolTokens)
		if capTokens > 0 {
			tr.Note += fmt.Sprintf("; the server refused a longer prompt, so this one is held to %d", capTokens)
		}
		if len(tr.Left) > 0 {
			tr.Note += fmt.Sprintf("; left out to fit: %v", tr.Left)
		}
		if room < lineOverhead*2 {
			tr.Note += fmt.Sprintf("; even so the prompt is over by about %d tokens and the server may cut it: raise the server's window", lineOverhead*2-room)
		}
	default:
		tr.Note = "fits"
	}
	return tr
}

// titleTokens estimates a section title's tokens.
const titleTokens = 4

// sectionsTokens sums the sections' tokens (those not in skip) with their
// titles.
func sectionsTokens(secs []turn.SectionTrace, skip []turn.Slot) int {
	n := 0
	for _, st := range secs {
		if st.Tokens > 0 && !slices.Contains(skip, st.Slot) {
			n += st.Tokens + titleTokens
		}
	}
	return n
}

// toolTokens counts the tools' schemas as the server renders them (their
// JSON).
func toolTokens(tools []llm.Tool, c Counter) int {
	if len(tools) == 0 {
		return 0
	}
	b, err := json.Marshal(tools)
	if err != nil {
		return 0
	}
	return c.Count(string(b))
}

// learn keeps a window a server's context-length error stated, so later
// turns fit it without failing first, in memory and in the store (facts),
// so those after a restart do too. The store is written only when the
// window or what the window function said with it changed.
func (a *assembler) learn(window int) {
	if window <= 0 {
		return
	}
	a.learnMu.Lock()
	defer a.learnMu.Unlock()
	w := windowFact{Tokens: window, Reported: a.reported}
	if w == a.learned {
		return
	}
	a.learned = w
	a.facts.putWindow(w)
}

// refit is the prompt limit for a retry after err, a server's
// context-length error on packet: the window it stated (learned for
// later turns) less the answer's reserve, in this package's count (scaled
// by how the server counted the same prompt), or three quarters of the
// refused prompt when the server gave no numbers.
func (a *assembler) refit(err error, packet *turn.Packet) int {
	limit := packet.Tokens * 3 / 4
	var e *llm.Error
	if !errors.As(err, &e) || e.Window <= 0 {
		return limit
	}
	a.learn(e.Window)
	room := float64(e.Window)*windowMargin - float64(a.reserve(e.Window))
	if e.PromptTokens > 0 && packet.Tokens > 0 {
		room *= float64(packet.Tokens) / float64(e.PromptTokens)
	}
	return min(limit, int(room))
}

// PromptSize is the prompt a turn of q sends once its conversation fills
// the context budget: the system sections as they read now, the tools'
// schemas, and agent.context_budget; parts says it by part. cyan doctor
// sets it against the server's window.
func (mv *MainVirtual) PromptSize(ctx context.Context, q turn.Query) (tokens int, parts string) {
	a := mv.asm
	system := 0
	var names []string
	for _, slot := range Slots {
		src, ok := a.sources[slot]
		if !ok {
			continue
		}
		budget := a.slotBudget(ctx, slot)
		sec, err := src.Section(ctx, q, budget, a.count.Count)
		if err != nil {
			continue
		}
		n := min(a.count.Count(sec.Body), max(budget, 0))
		if slot == turn.SlotMain {
			n = a.count.Count(sec.Body)
		}
		if n > 0 {
			system += n + titleTokens
			names = append(names, fmt.Sprintf("%s %d", slot, n))
		}
	}
	tools := toolTokens(mv.tools.Offer(q), a.count)
	tokens = system + tools + a.context
	parts = fmt.Sprintf("system %d (%s), tools %d, conversation up to %d (agent.context_budget)", system, strings.Join(names, ", "), tools, a.context)
	return tokens, parts
}
