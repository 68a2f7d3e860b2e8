// Package onebot is the bridge adapter for OneBot v11, the protocol NapCat,
// LLOneBot and Lagrange.OneBot speak for QQ: events and API calls as JSON
// over a WebSocket, in reverse mode (the implementation connects to cyan at
// /onebot/v11/ws with X-Self-ID, X-Client-Role and its access token) or
// forward mode (cyan connects to the implementation's server), both with
// reconnection and heartbeat watching.
//
// It reads message events, private and group, in both message formats
// (segment arrays and CQ-code strings) — text, at, reply, face, image and
// record segments; sender.card or nickname as the name, user_id as the
// identity — and sends with send_group_msg / send_private_msg, matching
// each response by its echo. NapCat's set_input_status shows typing in
// private chats.
//
// It may import bridge.
package onebot
