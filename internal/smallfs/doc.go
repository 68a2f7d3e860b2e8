// Package smallfs mounts small real filesystems (tmpfs) for tests that
// must see a disk fill up, and fills them. Mounting needs root (or
// CAP_SYS_ADMIN); without it a test skips, unless CYAN_REQUIRE_TOOLS=1 is
// set (as CI does), where it fails instead.
//
// It imports nothing of cyan's.
package smallfs
