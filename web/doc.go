// Package web is the desktop companion page, embedded in the binary: plain
// HTML, CSS and ES modules, no build step, no request to any other origin.
// The page talks to the HTTP API of package api (messages, the greeting of
// an empty channel, the stream with its speech events, the voice's audio,
// the persona, which names the conversation the page opens: the persona's
// own, unless ?channel= names another); it renders replies' markdown itself (app/markdown.js,
// escaping first), marks and resends unsent messages with their
// idempotency key, shows the connection's state, stops and interrupts the
// voice (app/player.js). A persona's avatar.vrm replaces the drawn face
// with the model (app/vrm.js, on three.js and three-vrm vendored under
// app/vendor/ by vendor/update.sh). Handler serves its
// files at / and /app/, and Paths lists them: on a bind that needs the
// token, exactly those paths open without it (the page then signs in for
// the session cookie).
//
// It imports nothing of cyan's.
package web
