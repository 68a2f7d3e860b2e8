// Package tgtest is a fake Telegram Bot API server for tests: it serves
// https://api.telegram.org/bot<token>/<method> as the Bot API documents it
// — parameters as multipart/form-data, application/x-www-form-urlencoded or
// JSON; answers {"ok": true, "result": …} or {"ok": false, "error_code",
// "description"} — for getMe, deleteWebhook, setWebhook, getUpdates (long
// polling with offset and timeout), sendMessage, sendChatAction and getFile
// (and the file download path), recording every call.
//
// It imports nothing of cyan's.
package tgtest
