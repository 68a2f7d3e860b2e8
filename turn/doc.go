// Package turn holds the value types of one turn of main-virtual: what
// comes in (Incoming), who follows it (Listener, StreamEvent), what comes
// out (Result, TurnError, Limited) and its trace (Trace, Packet and their
// parts), and the turn as the parts that fill its prompt see it (Query,
// Source, Section: memory and the event log provide their slots' Sources
// here, below main-virtual, without importing it). main-virtual runs turns; the API starts and shows them (the
// bridges reach main-virtual through their own Agent interface and do not
// import turn). Sharing these values here, below both, lets the API talk
// to main-virtual through an interface it declares itself instead of
// reaching into main-virtual (SPEC §1's layers).
//
// It may import store, llm and packets.
package turn
