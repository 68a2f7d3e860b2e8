//go:build !unix

package store

// LockFile is the name of the data dir's lock file.
const LockFile = "db/LOCK"

// dirLock is empty where flock is unavailable: Badger's own directory lock
// on db/LOCK then keeps a second daemon out (Open maps its error to
// ErrLocked).
type dirLock struct{}

func lockDir(string) (*dirLock, error) { return &dirLock{}, nil }

func (*dirLock) release() {}

// Holder cannot tell without flock; it reports no holder.
func Holder(string) (pid int, held bool, err error) { return 0, false, nil }
