// Package store keeps cyan's durable state in an embedded Badger database in
// the data dir: channels, messages (time-ordered uuid v7 ids) and the last
// prompt-packet trace of each channel. A write returns only once it is on
// disk (SyncWrites), so an acknowledged message survives kill -9. Appends
// that meet at the disk share one commit (commit.go): those that arrive
// while a commit is under way are written together by the next one, one
// fsync for all, each caller returning once its own messages are durable.
// One daemon owns a data dir at a time; a second one gets ErrLocked.
//
// The store keeps its disk from filling (space.go): Badger writes through
// memory maps, where a full disk kills the process with SIGBUS, so every
// write of the store first checks that the disk keeps Options.MinFree free
// (else ErrDiskFull, with the disk and folder named) and that the data dir
// is still the one opened (else ErrDataDirGone); Badger's write-ahead logs
// are preallocated. Open repairs what a killed start leaves behind
// (repair.go), and CloseWithin never hangs on a disk that is gone, full or
// failing (close.go).
//
// A damaged database says so and loses nothing it can keep: the store
// records what the database held at each clean close and checkpoint
// (state.go), and before Badger opens the folder it checks the MANIFEST,
// every table (each block's checksum), every write-ahead and value log
// against that record (check.go, wal.go). A damaged file stops Open with a
// *DamageError naming it; Badger never opens such a folder, so it neither
// starts empty nor deletes a table. Without a record the files are
// checked for what it would show (unrecorded.go). Salvage copies what
// still reads into a new data dir (salvage.go, salvage_table.go; a table
// whose index is lost is read from its start, table_walk.go); an open
// that finds fewer messages than recorded is logged and kept as a
// Shortfall (count.go).
//
// Later packages (memory, events, recall) keep their own key spaces in the
// same database through DB; the prefixes in keys.go are the registry.
//
// The store also holds the journal (package journal), the one event log:
// every message stored live is posted on it, and every batch of history
// imported (journal.MessagesImported, with the channels and times an
// import batch covers and whether it is the import's last: ImportBatch).
//
// It may import journal.
package store
