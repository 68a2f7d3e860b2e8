package daemon

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/cyan-agent/cyan/api"
	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/llm"
	"github.com/cyan-agent/cyan/mainvirtual"
	"github.com/cyan-agent/cyan/recall"
	"github.com/cyan-agent/cyan/store"
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

// toolSet offers built-in tools (for now the recall tool) to main-virtual.
// It moves into the tool registry when that lands.
type toolSet struct {
	tools []recall.Tool
}

var _ mainvirtual.Tools = (*toolSet)(nil)

func (t *toolSet) Offer(mainvirtual.Query) []llm.Tool {
	out := make([]llm.Tool, 0, len(t.tools))
	for _, x := range t.tools {
		out = append(out, llm.Tool{Name: x.Name, Description: x.Description, Parameters: x.Parameters})
	}
	return out
}

func (t *toolSet) Call(ctx context.Context, q mainvirtual.Query, call llm.ToolCall) mainvirtual.ToolResult {
	for _, x := range t.tools {
		if x.Name != call.Name {
			continue
		}
		text, err := x.Run(ctx, q.Channel, call.Arguments)
		if err != nil {
			return mainvirtual.ToolResult{Text: err.Error(), IsError: true}
		}
		return mainvirtual.ToolResult{Text: text}
	}
	return mainvirtual.ToolResult{Text: "there is no tool named " + call.Name, IsError: true}
}

// pulledSource renders the pulled-info area: "%[source] location -
// summary" lines, escaped (they quote stored text), newest kept when the
// budget is short.
func pulledSource(p *recall.Pulled) mainvirtual.Source {
	return mainvirtual.SourceFunc(func(_ context.Context, q mainvirtual.Query, budget int, count func(string) int) (mainvirtual.Section, error) {
		items := p.View(q.Channel)
		var sec mainvirtual.Section
		var lines []string
		used := 0
		for i := len(items) - 1; i >= 0; i-- {
			line := mainvirtual.Escape(strings.ReplaceAll(items[i].Line(), "\n", " "))
			n := count(line)
			it := mainvirtual.ItemTrace{ID: items[i].Ref + " " + items[i].Location, Tokens: n}
			if used+n > budget {
				it.Reason = "over budget"
			} else {
				used += n
				it.Included = true
				lines = append([]string{line}, lines...)
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
