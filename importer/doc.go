// Package importer reads conversation history from files into store
// messages: JSON lines ({"time", "channel", "user", "role"?, "text",
// "id"?}) and the LoCoMo benchmark's file (each turn's dia_id kept as the
// message's external id, session times as message times, each
// conversation into its own channel). Parsers check everything and report
// the line or conversation that is wrong; they never store anything
// themselves.
//
// It may import store.
package importer
