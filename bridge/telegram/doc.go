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
// It may import bridge, config, registry, clock and supervise.
package telegram
