//go:build !race

package store

// raceOn: built with the race detector.
const raceOn = false
