package script

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/internal/llmtest"
)

// TestCompressReadsTextOrSummary runs the compress script: the built-in
// one answers {"summary": …}; a persona's override that takes only the
// text and answers in plain text is used as it is; a value of neither
// shape is an error that says what to return, with its trace.
func TestCompressReadsTextOrSummary(t *testing.T) {
	r := newRig(t)
	persona := t.TempDir()
	lib, err := NewLibrary(LibraryOptions{Generator: r.gen, PersonaDir: func() string { return persona }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r.fake.Enqueue(llmtest.Reply{Text: `{"summary": "said hello to amy"}`})
	text, traceID, err := lib.Compress(ctx, "home", "hello there, amy", "Cy")
	if err != nil || text != "said hello to amy" || traceID == "" {
		t.Fatalf("built-in: %q, %q, %v", text, traceID, err)
	}
	if tr, err := r.traces.Get(traceID); err != nil || tr.Channel != "home" || tr.Name != CompressScript {
		t.Fatalf("trace %+v %v", tr, err)
	}
	for _, tc := range []struct {
		name, script, reply, want, wantErr string
	}{
		{"plain text", "---\ninput: [text]\n---\nuser: \"Shorten: {{ text }}\"\n", "  said hello  ", "said hello", ""},
		{"empty summary", "---\ninput: [text]\noutput: {type: object}\n---\nuser: \"Shorten: {{ text }}\"\n", `{"summary": " "}`, "", `it should return text or {"summary": text}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.MkdirAll(filepath.Join(persona, ScriptsDir), 0o700)
			if err := os.WriteFile(filepath.Join(persona, ScriptsDir, CompressScript+Ext), []byte(tc.script), 0o600); err != nil {
				t.Fatal(err)
			}
			r.fake.Enqueue(llmtest.Reply{Text: tc.reply})
			text, traceID, err := lib.Compress(ctx, "home", "hello there", "Cy")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || traceID == "" {
					t.Fatalf("Compress = %q, %q, %v; want an error with %q and a trace", text, traceID, err, tc.wantErr)
				}
				return
			}
			if err != nil || text != tc.want {
				t.Fatalf("Compress = %q, %v; want %q", text, err, tc.want)
			}
		})
	}
}
