// Package telegram is the bridge adapter for Telegram bots, through the
// Bot API with github.com/go-telegram/bot: long polling by default (after
// deleteWebhook), a webhook when configured; private chats, groups and
// supergroups; mentions through message entities (@username, text_mention),
// replies to the bot's messages and /commands for it; sendChatAction
// "typing" while a turn runs; mentions and replies sent as text_mention
// entities and reply_parameters. The Bot API's base URL is configurable, so
// tests point it at a fake.
//
// Each Run is one session (getMe, then polling or the webhook); it has no
// retry loop of its own. A getUpdates that fails ends the session instead
// of being retried by the library, and the supervisor that runs the
// bridge starts the next one with backoff, or after the retry_after of a
// 429 (supervise.RetryAfter); the next session polls from after the last
// update handed over. A refused token is ErrToken, which its platform
// calls permanent.
//
// A sendMessage is tried again only when its error proves nothing was sent
// (a 429, a refused connection); one that timed out (Options.SendTimeout)
// or was cut has an unknown outcome and is not sent again. A group
// upgraded to a supergroup — the refused send's migrate_to_chat_id, or the
// migrate_to_chat_id / migrate_from_chat_id service messages — is reported
// as a move (bridge.ChatEvents); a my_chat_member update restricting the
// bot (until its until_date) as a mute and one giving the right back as
// its end, and "not enough rights to send" as a mute with no known end.
//
// It may import bridge, config, registry, clock and supervise.
package telegram
