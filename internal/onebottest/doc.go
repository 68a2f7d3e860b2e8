// Package onebottest is a fake OneBot v11 implementation for tests — what
// NapCat, LLOneBot or Lagrange.OneBot is to cyan: it connects to a reverse
// WebSocket as a client or serves a forward WebSocket, pushes message,
// notice and meta events in either message format (segment arrays or
// CQ-code strings), and answers the API calls (send_group_msg,
// send_private_msg, get_login_info, set_input_status) with echo-matched
// responses, recording every call. A record segment must carry an inline
// WAV, MP3, SILK or AMR file, as Lagrange.OneBot requires (record.go);
// Records returns the voices sent.
//
// Each behaviour copies a real implementation's source:
//
// NapCat (github.com/NapNeko/NapCatQQ at commit
// af07479351c5b974e72ae1c7183f2272e79ffc1c):
//   - the reverse client (packages/napcat-onebot/network/websocket-client.ts,
//     tryConnect): headers X-Self-ID, "Authorization: Bearer <token>" (sent
//     even when the token is empty), x-client-role: Universal and
//     User-Agent: OneBot/11; a lifecycle "connect" meta event on open
//     (event/meta/OB11LifeCycleEvent.ts); a heartbeat every heartInterval
//     (event/meta/OB11HeartbeatEvent.ts: status {online, good}, interval in
//     milliseconds) — Impl.HeartInterval;
//   - responses (action/OneBotAction.ts, OB11Response.createResponse):
//     status, retcode, data, message and wording (the same text), echo
//     (null when none), stream "normal-action"; a frame that is not JSON gets
//     1400 "json解析失败,请检查数据格式", an unknown action 1404 "不支持的Api
//     <action>", a handler's error 1200 with its message (Impl.FailNext);
//   - the forward server (network/websocket-server.ts, authorize): the token
//     from ?access_token= first, else the Authorization header after
//     "Bearer "; a wrong one gets the upgrade, then
//     {"status":"failed","retcode":1403,"message":"token验证失败",…} and a
//     close (Impl.HTTPRefusal: an HTTP 401/403 before the upgrade instead,
//     as go-cqhttp does). LLOneBot answers a wrong token the same way
//     (github.com/LLOneBot/LLOneBot at commit
//     c9bd964df7b9c550b2b94031f65b3207b5c241dd, src/onebot11/connect/ws.ts,
//     authorize: the same 1403 frame, then socket.close());
//   - the CQ encoder (helper/cqcode.ts, encodeCQCode): text escapes &, [
//     and ]; values also ",";
//   - the recall and poke notices (event/notice/OB11GroupRecallNoticeEvent.ts,
//     OB11FriendRecallNoticeEvent.ts, OB11PokeEvent.ts);
//   - events.go: bot_offline (BotOfflineEvent.ts) and an account logged out
//     while the link stays up (heartbeat status.online false, get_status
//     online false: Impl.SetOffline), group_increase, group_decrease and
//     group_name notices, the json, markdown, file, onlinefile and forward
//     segments (api/msg.ts) and get_forward_msg (action/go-cqhttp/
//     GetForwardMsg.ts), each beside its source.
//
// Lagrange.OneBot (github.com/LagrangeDev/Lagrange.Core at commit
// e17fe35641d3a1dc9955566fa875232551224441, the last with Lagrange.OneBot):
// Impl.Lagrange is its reverse client (Lagrange.OneBot/Core/Network/Service/
// ReverseWSService.cs): X-Client-Role and X-Self-ID, the Authorization header
// only when a token is set, a lifecycle "connect" on open and a heartbeat
// every HeartBeatInterval, 5000 ms by default (Options/WSServiceOptions.cs).
//
// Delivery (delivery.go, each behaviour citing its source beside it): QQ's
// confirmation of a send takes ConfirmDelay (or Confirm's), the message
// posted from the start; past KernelTimeout (NapCat's and LLOneBot's 10 s)
// the send answers their timeout errors, retcode 1200; a group where the
// bot is muted (Mute, with or without the group_ban notice; Unmute's
// lift_ban) never confirms a send (Lagrange: its server result code);
// get_group_msg_history / get_friend_msg_history give a chat's latest
// messages, the bot's own included; get_group_member_info the bot's
// shut_up_timestamp (not on Lagrange); Lagrange answers retcode 200 to a
// reply to a message it never stored. Posted is what members see.
//
// It imports nothing of cyan's: it speaks the protocol as the
// implementations write it, so the adapter is tested against them, not
// against itself.
package onebottest
