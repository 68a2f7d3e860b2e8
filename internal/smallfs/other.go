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

// Free is not implemented here.
func Free(string) (int64, error) { return 0, errors.ErrUnsupported }

// Fill is not implemented here.
func Fill(string, int64) (int64, error) { return 0, errors.ErrUnsupported }
