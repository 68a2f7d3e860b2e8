// Package onebottest is a fake OneBot v11 implementation for tests — what
// NapCat or LLOneBot is to cyan: it connects to a reverse WebSocket as a
// client (X-Self-ID, X-Client-Role: Universal, Authorization: Bearer) or
// serves a forward WebSocket, pushes message and meta events in either
// message format (segment arrays or CQ-code strings), and answers the API
// calls (send_group_msg, send_private_msg, get_login_info,
// set_input_status) with echo-matched responses, recording every call.
//
// It imports nothing of cyan's: it speaks the protocol as its spec
// writes it, so the adapter is tested against the protocol, not against
// itself.
package onebottest
