package mainvirtual

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/notation"
	"github.com/cyan-agent/cyan/persona"
	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/turn"
)

// assembler builds prompt packets. It owns no content: every section comes
// from a Source, the context from the store.
type assembler struct {
	store   *store.Store
	sources map[turn.Slot]turn.Source
	budgets map[turn.Slot]int
	context int // token budget of the context messages
	count   Counter
	// start bounds where the context may begin (nil: no bound).
	start   ContextStarter
	persona func() *persona.Persona
	// compressor shortens old model messages (nil: none); compress tunes it.
	compressor Compressor
	compress   config.Compress
	images     func(text string) []llm.Image
	owner      func(m *store.Message) bool // nil: no line is the owner's
	log        *slog.Logger
	// window says the server's window (nil: unknown); maxTokens is
	// llm.max_tokens.
	window func(context.Context) llm.Window
	// learnMu guards learned, a window a context-length error stated
	// (kept in facts, so a restart keeps it), and reported, the last
	// window the window function read (not 0, not assumed; at start, the
	// one it read when the stored window was learned).
	learnMu  sync.Mutex
	learned  windowFact
	reported int
	facts    *facts
	// loreRoom is the lorebook slots' budget for a window (0: not known)
	// when Options.Budgets does not set them (nil: the budgets map's).
	loreRoom  func(window int) int
	maxTokens int
}

// slotBudget is a slot's token budget: the budgets map's, but the
// lorebook's follows the model's window (loreRoom).
func (a *assembler) slotBudget(ctx context.Context, slot turn.Slot) int {
	if b, ok := a.budgets[slot]; ok || a.loreRoom == nil || slot != turn.SlotLoreBefore && slot != turn.SlotLoreAfter {
		return b
	}
	return a.loreRoom(a.serverWindow(ctx).tokens)
}

// MaxImages bounds the pictures one turn passes to the model.
const MaxImages = 4

// assemble builds the packet for a turn in q.Channel whose incoming message
// is already stored, for a call that offers tools. The prompt is fitted
// to the server's window (window.go): when the window is smaller than
// the budgets, the conversation gets what the system prompt and the tools
// leave, then the pulled info and the lorebook are left out; capTokens,
// when above 0, bounds the whole prompt further (a retry after the server
// said it did not fit). Every cut is in the packet's trace.
func (a *assembler) assemble(ctx context.Context, q turn.Query, tools []llm.Tool, capTokens int) (*turn.Packet, error) {
	start := time.Now()
	p := &turn.Packet{Channel: q.Channel, Time: q.Now}
	type section struct {
		slot turn.Slot
		body string
	}
	var secs []section
	for _, slot := range Slots {
		src, ok := a.sources[slot]
		if !ok {
			continue
		}
		budget := a.slotBudget(ctx, slot)
		st := turn.SectionTrace{Slot: slot, Budget: budget}
		sec, err := src.Section(ctx, q, budget, a.count.Count)
		if err != nil {
			if slot == turn.SlotMain {
				return nil, fmt.Errorf("main prompt: %w", err)
			}
			st.Error = err.Error()
			p.Sections = append(p.Sections, st)
			continue
		}
		st.Items, st.Note = sec.Items, sec.Note
		body := strings.TrimSpace(sec.Body)
		st.Tokens = a.count.Count(body)
		if st.Tokens > budget {
			if slot == turn.SlotMain {
				st.Note = joinNote(st.Note, "over budget: the main prompt is never clipped")
			} else {
				body, st.Tokens = clip(body, budget, a.count.Count)
				st.Clipped = true
			}
		}
		p.Sections = append(p.Sections, st)
		secs = append(secs, section{slot, body})
	}
	p.ToolTokens = toolTokens(tools, a.count)
	budget := a.context
	if w := a.fitWindow(ctx, p, capTokens); w != nil {
		p.Window = w
		budget = w.Context
		for i := range secs {
			if slices.Contains(w.Left, secs[i].slot) {
				secs[i].body = ""
			}
		}
	}
	var system strings.Builder
	for _, sec := range secs {
		if sec.body == "" {
			continue
		}
		if system.Len() > 0 {
			system.WriteString("\n\n")
		}
		if title := slotTitle[sec.slot]; title != "" {
			system.WriteString(title)
			system.WriteByte('\n')
		}
		system.WriteString(sec.body)
	}
	sys := system.String()
	p.SystemTokens = a.count.Count(sys)
	if sys != "" {
		p.Messages = append(p.Messages, llm.Message{Role: llm.RoleSystem, Content: sys})
	}
	msgs, ct, err := a.contextMessages(ctx, q, budget)
	if err != nil {
		return nil, err
	}
	if w := p.Window; w != nil && budget < a.context {
		ct.Note = joinNote(ct.Note, fmt.Sprintf("the context budget is %d tokens, not agent.context_budget's %d: %s", budget, a.context, w.Note))
	}
	p.Context = ct
	p.Messages = append(p.Messages, msgs...)
	p.Tokens = p.SystemTokens + ct.Tokens + p.ToolTokens
	p.AssemblyMicros = time.Since(start).Microseconds()
	return p, nil
}

// lineOverhead estimates the tokens of a rendered line's prefix
// ("^name [2026-11-22 10:31]: ") and the message framing.
const lineOverhead = 14

// contextMessages reads the newest context_count messages of the channel
// since the start the ContextStarter gives (the previous topic's), fits
// them to the context budget (fit: compressing the agent's older messages,
// then dropping the oldest; the incoming message always stays), and renders
// them as provider messages, merging neighbours of the same role. If the
// start cannot be found the context is read without it and the trace says
// why.
func (a *assembler) contextMessages(ctx context.Context, q turn.Query, budget int) ([]llm.Message, turn.ContextTrace, error) {
	p := a.persona()
	maxCount, agent := p.ContextCount, p.Name
	ct := turn.ContextTrace{Budget: budget, MaxCount: maxCount, MiniFull: p.MiniFullContextCount}
	if a.start != nil {
		id, err := a.start.ContextStart(ctx, q.Channel, q.Now)
		if err != nil {
			ct.StartError = err.Error()
		}
		ct.Start = id
	}
	recent, err := a.store.Recent(q.Channel, store.Window{Limit: maxCount, MaxScan: 4 * maxCount, Keep: (*store.Message).Conversational, Since: ct.Start})
	if err != nil {
		return nil, ct, fmt.Errorf("context: %w", err)
	}
	items := make([]ctxItem, len(recent))
	for i, m := range recent {
		n := m.Tokens
		if n == 0 && m.Text != "" {
			n = a.count.Count(m.Text)
		}
		items[i] = ctxItem{m: m, full: n + lineOverhead}
	}
	kept := seenOrder(items[a.fit(ctx, q, items, p.MiniFullContextCount, &ct):])
	// The conversation handed to a provider must open with a user turn.
	// When it opens with what the agent said first of its own accord (a
	// greeting), a platform line says so; other model messages are dropped.
	var out []llm.Message
	if len(kept) > 0 && kept[0].m.Role == store.RoleAssistant && kept[0].m.Proactive {
		line := notation.PlatformLine("system", kept[0].m.Time, "the conversation opens with your message below")
		out = append(out, llm.Message{Role: llm.RoleUser, Content: line})
		ct.Tokens += a.count.Count(line)
	}
	for len(out) == 0 && len(kept) > 0 && kept[0].m.Role == store.RoleAssistant {
		ct.Dropped = append(ct.Dropped, turn.DroppedItem{ID: kept[0].m.ID, Reason: "the context must open with a user line"})
		if kept[0].inUse {
			ct.Compressed = ct.Compressed[1:]
		}
		kept = kept[1:]
	}
	answered := -1 // the agent's last answer: what follows it is new to this turn
	for i, it := range kept {
		if it.m.Role == store.RoleAssistant {
			answered = i
		}
	}
	images := 0
	for i, it := range kept {
		m := it.m
		ct.Included = append(ct.Included, m.ID)
		ct.Tokens += it.cost()
		role, text := llm.RoleUser, ""
		switch m.Role {
		case store.RoleUser:
			if a.owner != nil && a.owner(m) {
				text = notation.OwnerLine(m.User, agent, m.Time, a.fitText(it, &ct))
			} else {
				text = notation.UserLine(m.User, agent, m.Time, a.fitText(it, &ct))
			}
		case store.RoleSystem:
			text = notation.PlatformLine(platformName(m.User), m.Time, a.fitText(it, &ct))
		case store.RoleAssistant:
			role, text = llm.RoleAssistant, m.Text
			switch {
			case m.Empty:
				text = notation.Empty
			case it.inUse:
				text = compressedMark + it.short
			}
			if m.Part == 0 && !m.Empty { // both sides carry their time (the seed's context); an output's later parts share it
				text = notation.AgentTime(m.Time) + text
			}
		}
		var pics []llm.Image
		if a.images != nil && i > answered && m.Role == store.RoleUser && images < MaxImages {
			pics = a.images(m.Text)
			if len(pics) > MaxImages-images {
				pics = pics[:MaxImages-images]
			}
			images += len(pics)
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			sep := "\n"
			if role == llm.RoleAssistant {
				sep = "\n" + notation.Break + "\n"
			}
			out[n-1].Content += sep + text
			out[n-1].Images = append(out[n-1].Images, pics...)
			continue
		}
		out = append(out, llm.Message{Role: role, Content: text, Images: pics})
	}
	if d := p.DepthPrompt; d != nil && len(out) > 0 {
		var n int
		out, n = withDepthPrompt(out, d, p.Name, UserName(q, p.Name), a.count.Count)
		ct.Tokens += n
		ct.DepthPrompt = n
	}
	return out, ct, nil
}

// withDepthPrompt puts the persona's depth prompt (a card's Character's
// Note) into the conversation d.Depth messages before its end, as
// SillyTavern does: a system note is a system message of its own there; a
// user or assistant note joins that side's message when one is next to it.
// It returns the messages and the note's tokens.
func withDepthPrompt(out []llm.Message, d *persona.DepthPrompt, agent, user string, count func(string) int) ([]llm.Message, int) {
	text := strings.NewReplacer("${agent_name}", agent, "${user}", user).Replace(d.Text)
	at := max(0, len(out)-d.Depth)
	role := llm.RoleSystem
	switch d.Role {
	case "user":
		role = llm.RoleUser
	case "assistant":
		role = llm.RoleAssistant
	}
	if role != llm.RoleSystem {
		if at > 0 && out[at-1].Role == role {
			out[at-1].Content += "\n" + text
			return out, count(text)
		}
		if at < len(out) && out[at].Role == role {
			out[at].Content = text + "\n" + out[at].Content
			return out, count(text)
		}
	}
	out = slices.Insert(out, at, llm.Message{Role: role, Content: text})
	return out, count(text)
}

// seenOrder puts what people said while the agent was answering after
// that answer: a message stored after the turn's incoming message but
// before its reply was not seen by that turn (a group chat goes on while
// the agent thinks), so the context shows it after the reply, as new, and
// the conversation ends with what the next answer is for. Only user and
// platform lines move; the agent's messages keep their order.
func seenOrder(items []ctxItem) []ctxItem {
	out := make([]ctxItem, 0, len(items))
	var later []ctxItem
	for _, it := range items {
		if it.m.Role == store.RoleAssistant {
			if r := it.m.ReplyTo; r != "" {
				k := len(out)
				for k > 0 && out[k-1].m.Role != store.RoleAssistant && out[k-1].m.ID > r {
					k--
				}
				later = append(append([]ctxItem(nil), out[k:]...), later...)
				out = out[:k]
			}
			out = append(out, it)
			continue
		}
		out = append(out, later...)
		later = later[:0]
		out = append(out, it)
	}
	return append(out, later...)
}

// platformName is the name a platform message is shown under: "system"
// unless the daemon stored it under a process name such as "cyan-limit".
func platformName(user string) string {
	if user == "" {
		return "system"
	}
	return notation.CleanName(user)
}

// clip cuts body to fit budget tokens, dropping whole lines from the end
// and then, if a single line is still too long, runes; it marks the cut.
func clip(body string, budget int, count func(string) int) (string, int) {
	const mark = "\n[…clipped]"
	if budget <= count(mark) {
		return "", 0
	}
	lines := strings.Split(body, "\n")
	for len(lines) > 1 {
		lines = lines[:len(lines)-1]
		s := strings.Join(lines, "\n") + mark
		if n := count(s); n <= budget {
			return s, n
		}
	}
	s := lines[0]
	for len(s) > 0 {
		cut := len(s) * 3 / 4
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
		if n := count(s + mark); n <= budget {
			return s + mark, n
		}
	}
	return "", 0
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
