// Package events will own the event log (event, day, week, month and year
// records with their rollups), objects with info blocks, relationship lines
// that decay by time, theory packets, and history import.
//
// It may import store, config and packets.
package events
