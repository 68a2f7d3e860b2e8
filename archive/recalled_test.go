package archive

import (
	"strings"
	"testing"
	"time"

	"github.com/cyan-agent/cyan/store"
)

// Export keeps a recalled message with its mark, and import restores it.
func TestExportKeepsTheRecalledMark(t *testing.T) {
	src := openDir(t, t.TempDir())
	defer src.Close()
	m := &store.Message{Channel: "qq:group:1", Role: store.RoleUser, User: "amy", Text: "oops", ExternalID: "4242"}
	if err := src.Append(t0, m); err != nil {
		t.Fatal(err)
	}
	if _, err := src.MarkRecalled("qq:group:1", "4242", t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	out, _ := export(t, src)
	if !strings.Contains(out, `"recalled":"2026-`) {
		t.Fatalf("the export lost the mark:\n%s", out)
	}
	dst := openDir(t, t.TempDir())
	defer dst.Close()
	if _, err := Import(dst, strings.NewReader(out)); err != nil {
		t.Fatal(err)
	}
	if got, err := dst.Get(m.ID); err != nil || !got.IsRecalled() {
		t.Fatalf("imported: %+v %v", got, err)
	}
}
