// Package tgtest is a fake Telegram Bot API server for tests: it serves
// https://api.telegram.org/bot<token>/<method> as the Bot API documents it
// — parameters as multipart/form-data, application/x-www-form-urlencoded or
// JSON; answers {"ok": true, "result": …} or {"ok": false, "error_code",
// "description", "parameters"} — for getMe, deleteWebhook, setWebhook,
// getUpdates, sendMessage, sendVoice, sendChatAction and getFile (and the
// file download path), recording every call. sendVoice posts an OGG/Opus
// upload as a voice message and any other file as a document (voice.go;
// Voices).
//
// Where the real server's behaviour matters it copies tdlib's
// telegram-bot-api (Client.cpp and Query.cpp at commit 01a3679) and TDLib
// (tdlib/td at commit 022d602), cited beside each: getUpdates' offset
// semantics (confirmed updates are forgotten, a negative offset keeps the
// last n), sendMessage's 4096-character limit and its "Bad Request:
// message is too long", an empty text, forum topics (message_thread_id,
// is_topic_message, "message thread not found") and 429 "Too Many
// Requests: retry after N" with parameters.retry_after; any update kind
// (PushUpdate: service messages, sender_chat with the placeholder users
// the Bot API puts in "from" — GroupAnonymousBot, Telegram,
// Channel_Bot) and edited_message (PushEdit), in updates.go.
//
// Delivery (delivery.go): a sendMessage answered late (SendDelay,
// SendDelays) with the message posted from the start; a group upgraded to
// a supergroup (Migrate: the 400 with parameters.migrate_to_chat_id and
// the two service messages); a chat where the bot may not write
// (Restrict: 400 "not enough rights to send text messages to the chat";
// RestrictBot and LiftBot also queue the my_chat_member update);
// Posted is what the chat shows.
//
// It imports nothing of cyan's.
package tgtest
