// Package onebot is the bridge adapter for OneBot v11, the protocol NapCat,
// LLOneBot and Lagrange.OneBot speak for QQ: events and API calls as JSON
// over a WebSocket, in reverse mode (the implementation connects to cyan at
// /onebot/v11/ws with X-Self-ID, X-Client-Role and its access token) or
// forward mode (cyan connects to the implementation's server), with
// heartbeat watching.
//
// It reads message events, private and group, in both message formats
// (segment arrays and CQ-code strings) — text, at, reply, face, image and
// record segments; sender.card or nickname as the name, user_id as the
// identity — the group_recall / friend_recall notices and pokes of the bot
// (notify/poke), and sends with send_group_msg / send_private_msg, matching
// each response by its echo. NapCat's set_input_status shows typing in
// private chats.
//
// A send is never sent twice (confirm.go): one written and never answered
// — cyan's timeout, the implementation's own wait for QQ ("Timeout:
// NTEvent …", "invoke timeout …") or the connection dropping after the
// request — is looked for in the chat's latest messages
// (get_group_msg_history, get_friend_msg_history; up to three pages back
// in a busy chat) before the bridge may
// send it again; when it cannot be looked for, its outcome is unknown
// (bridge.SendError.Unknown). A group_ban notice for the bot's own id
// holds the group's answers until lift_ban or its end (bridge.ChatEvents);
// a send refused while muted is caught through get_group_member_info's
// shut_up_timestamp; Lagrange.OneBot's retcode 200 for a reply to a
// message it never stored has the answer sent without the reply.
//
// The read loop never waits on anything but the socket: responses and meta
// events (heartbeat, lifecycle) are handled in it, messages and notices
// queued for a goroutine of their own (the bridge fetches media off that
// path: the adapter is a bridge.Pusher), and the heartbeat watch looks
// only at the connection's own silence.
//
// The forward dialer has no loop of its own: each Run makes one connection
// attempt and serves it until it ends, then returns why, marked with the
// wait it learned (supervise.RetryAfter), and the supervisor that runs the
// bridge makes the next attempt on its clock. The waits start at a second
// and double to the reconnect setting; a wrong access token — an HTTP
// 401/403, NapCat's and LLOneBot's {"retcode":1403} frame, or a close
// within seconds of every connect — is a bridge.AuthError naming
// bridges.onebot[].access_token, and the waits grow to minutes (the token
// may be corrected on either side, so it is retried slowly, not given
// up). Only a connection that proved healthy (get_login_info answered, a
// heartbeat seen) resets them, and tells the supervisor so
// (supervise.Healthy).
//
// It may import bridge, config, registry, clock and supervise.
package onebot
