// Package glob is cyan's one pattern matcher: tool names and paths in
// permission rules, the channel patterns of the router's subscriptions,
// the voice's tts.channels, the stream's ?channel= filter and config
// validation all match here, so one pattern means the same thing
// everywhere.
//
// The syntax: "*" is any run of characters (in a path, Path, it stops at
// "/"); "**" is any run of characters, "/" included (paths); "?" is
// exactly one character (in a path, not "/"); every other character
// matches itself (no escapes, no classes).
//
// Channels (Channel) and free text (Text) have no separator: "*" and "?"
// match ":" and "/" too, so "qq:group:*" matches every QQ group and
// "qq:group:?23" the three-digit groups that end in 23. Matching is linear
// in len(pattern)·len(name), whatever the input.
//
// It imports nothing of cyan's.
package glob
