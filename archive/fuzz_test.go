package archive

import (
	"strings"
	"testing"

	"github.com/cyan-agent/cyan/store"
)

// FuzzImport feeds Import any file: it must refuse what it cannot read
// with an error, never panic, and leave the store usable.
func FuzzImport(f *testing.F) {
	st, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		f.Fatal(err)
	}
	defer st.Close()
	f.Fuzz(func(t *testing.T, in string) {
		_, _ = Import(st, strings.NewReader(in))
		if err := st.Append(t0, &store.Message{Channel: "after", Role: store.RoleUser, Text: "still here"}); err != nil {
			t.Fatalf("the store after importing %q: %v", in, err)
		}
	})
}
