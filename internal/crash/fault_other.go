//go:build !linux

package crash

import (
	"fmt"
	"math/rand/v2"
)

// fault is only the no-fault mode here: the fault modes mount disks the
// Linux way.
type fault struct {
	mount     string
	minFreeMB int
}

func newFault(mode, _ string) (*fault, error) {
	if mode != FaultNone {
		return nil, fmt.Errorf("crash: the %s fault needs Linux", mode)
	}
	return &fault{}, nil
}

func (*fault) enter(int)          {}
func (*fault) perturb(*rand.Rand) {}
func (*fault) clear()             {}
func (*fault) close()             {}
