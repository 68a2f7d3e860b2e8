package daemon

import (
	"context"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cyan-agent/cyan/api"
	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/mainvirtual"
	"github.com/cyan-agent/cyan/memory"
	"github.com/cyan-agent/cyan/notation"
	"github.com/cyan-agent/cyan/packets"
	"github.com/cyan-agent/cyan/recall"
	"github.com/cyan-agent/cyan/store"
	"github.com/cyan-agent/cyan/tools"
)

// Embedder builds the recall embedder a configuration names.
func Embedder(c config.Embed) recall.Embedder {
	switch c.Provider {
	case "ollama", "openai":
		return &recall.RemoteEmbedder{Provider: c.Provider, BaseURL: c.BaseURL, Model: c.Model, APIKey: c.APIKey}
	default:
		return recall.HashEmbedder{}
	}
}

// newRecall builds the recall index over the store, with tool mode's
// judge calling the chat model.
func newRecall(cfg *config.Config, st *store.Store, client llm.Client, log *slog.Logger) (*recall.Index, error) {
	rlog := log.With("component", "recall")
	return recall.New(recall.Options{
		Store: st, Embedder: Embedder(cfg.Embed), IndexKind: cfg.Embed.Index, VectorWeight: cfg.Embed.VectorWeight,
		CacheDir: filepath.Join(cfg.DataDir, "recall"), Logger: rlog,
		Judge: &recall.LLMJudge{Client: client},
		// Workspace items and events do not exist yet; when they do, a
		// recalled message that belongs to one reviews it (D = 0.7).
		Reviewed: func(channel string, ids []string) {
			rlog.Debug("recalled", "channel", channel, "messages", len(ids))
		},
	})
}

// registerRecallTool puts the recall tool into the registry. It reads the
// conversation it is called in, nothing else, so it carries no effect
// beyond the agent's own memory.
func registerRecallTool(reg *tools.Registry, idx *recall.Index, now func() time.Time) error {
	rt := idx.Tool(now)
	return reg.Register(tools.Tool{
		Spec: tools.Spec{Name: rt.Name, Description: rt.Description, Parameters: rt.Parameters, Kind: tools.Natural,
			Effects: []string{tools.EffectMemory}, Source: tools.SourceBuiltin, AimParam: "prompt"},
		Run: func(ctx context.Context, c *tools.Call) (packets.Result, error) {
			out, err := rt.Run(ctx, c.Caller.Channel, string(c.Args))
			return packets.Result{OutputText: out}, err
		},
	})
}

// pulledSource renders the pulled-info area: what the workspace's tools
// pulled, then recall's passages as "%[source] location - summary" lines,
// escaped (they quote stored text), newest kept when the budget is short.
func pulledSource(mem *memory.Memory, p *recall.Pulled) mainvirtual.Source {
	return mainvirtual.SourceFunc(func(_ context.Context, q mainvirtual.Query, budget int, count func(string) int) (mainvirtual.Section, error) {
		items := p.View(q.Channel)
		var sec mainvirtual.Section
		var lines []string
		used := 0
		if own := mem.PulledSection(q.Channel); own != "" {
			lines = append(lines, own)
			used += count(own)
		}
		head := len(lines)
		for i := len(items) - 1; i >= 0; i-- {
			line := notation.Escape(strings.ReplaceAll(items[i].Line(), "\n", " "))
			n := count(line)
			it := mainvirtual.ItemTrace{ID: items[i].Ref + " " + items[i].Location, Tokens: n}
			if used+n > budget {
				it.Reason = "over budget"
			} else {
				used += n
				it.Included = true
				lines = slices.Insert(lines, head, line)
			}
			sec.Items = append(sec.Items, it)
		}
		sec.Body = strings.Join(lines, "\n")
		return sec, nil
	})
}

// imported is the import hook: the events work builds events from
// imported history here once it lands; for now it logs.
func (d *Daemon) imported(b api.ImportBatch) {
	if b.Final {
		d.log.Info("import finished", "added_in_last_batch", len(b.Added))
	}
}
