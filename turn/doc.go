// Package turn holds the value types of one turn of main-virtual: what
// comes in (Incoming), who follows it (Listener, StreamEvent), what comes
// out (Result, TurnError, Limited) and its trace (Trace, Packet and their
// parts). main-virtual runs turns; the API starts and shows them (the
// bridges reach main-virtual through their own Agent interface and do not
// import turn). Sharing these values here, below both, lets the API talk
// to main-virtual through an interface it declares itself instead of
// reaching into main-virtual (SPEC §1's layers).
//
// It may import store, llm and packets.
package turn
