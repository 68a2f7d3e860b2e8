package cmd

import (
	"testing"

	"github.com/cyan-agent/cyan/config"
	"github.com/cyan-agent/cyan/store"
)

// TestMinFreeFloorAgrees: the configuration refuses store.min_free_mb
// below the floor the store derives from its database's options.
func TestMinFreeFloorAgrees(t *testing.T) {
	if config.MinFreeFloorMB<<20 != store.MinFreeFloor {
		t.Fatalf("config.MinFreeFloorMB = %d MB, store.MinFreeFloor = %d MB: make them equal", config.MinFreeFloorMB, store.MinFreeFloor>>20)
	}
}
