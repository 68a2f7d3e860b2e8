//go:build !linux

package smallfs

import (
	"errors"
	"os"
	"testing"
)

// Mount skips (or fails under CYAN_REQUIRE_TOOLS=1): tmpfs is Linux's.
func Mount(t testing.TB, size int64) string {
	t.Helper()
	if os.Getenv("CYAN_REQUIRE_TOOLS") == "1" {
		t.Fatal("smallfs: tmpfs needs Linux; CYAN_REQUIRE_TOOLS=1 forbids skipping")
	}
	t.Skip("smallfs: tmpfs needs Linux")
	return ""
}

// Free reports errors.ErrUnsupported: tmpfs and its accounting are Linux's.
func Free(string) (int64, error) { return 0, errors.ErrUnsupported }

// Fill reports errors.ErrUnsupported, as Free does.
func Fill(string, int64) (int64, error) { return 0, errors.ErrUnsupported }
