// Package api is cyan's HTTP interface: the native API under /api/v1
// (messages and their live stream, traces, the workspace, the event log,
// recall and imports, observers, tools and the owner's approvals, backups
// and exports, bridges, speech, the persona), an OpenAI-compatible /v1 so
// existing front-ends can use the companion as a "model", /healthz,
// /metrics and the companion page's files. Whoever passes the guard is the owner (loopback, or the
// token) — but the owner's confirm rules still hold: a tool run through
// the API goes through the same permission check as the model's calls, so
// one the owner's rules say to confirm is parked as an approval (the
// answer says so, with its id) instead of running, and naming someone in
// "as" gains nothing.
//
// The guard (guard.go) runs before every route:
//   - Host: on loopback the Host header must name a loopback host or one of
//     api.allowed_hosts (DNS rebinding).
//   - Origin: browsers cannot act as the owner. A request whose Origin is not
//     the daemon's own (same scheme, host and port as its Host) nor one of
//     api.allowed_origins is refused on every route, WebSocket upgrades
//     included; so is one whose Sec-Fetch-Site says it comes from another
//     site without such an Origin (a top-level navigation to a Public path
//     excepted). Requests without those headers (the CLI, curl, bridges)
//     pass. Allowed origins get CORS headers and preflight answers.
//   - Content type: every method but GET, HEAD and OPTIONS needs
//     "Content-Type: application/json" (415 otherwise), so a form or a
//     text/plain fetch cannot pass for an API call.
//   - Token: off loopback every path needs the token, unless a Door opens it
//     (Public: /healthz and the page's files; OwnAuth: routes with their own
//     credentials, like the OneBot reverse WebSocket — they skip the token,
//     never the Origin rules). The token is sent as "Authorization: Bearer
//     <token>" (the scheme in any case) or as the session cookie.
//   - Body: size-limited (api.max_body_bytes) and read within
//     api.read_timeout (408 otherwise); headers within
//     api.read_header_timeout (HTTPServer).
//
// The session cookie contract, for the page served at "/": GET
// /api/v1/session answers {"token_required", "authenticated"}; when a
// token is required and the page is not signed in, it asks the user for the
// token once and sends POST /api/v1/session {"token": "…"} (JSON, from its
// own origin). The daemon then sets the cookie "cyan_session" (HttpOnly,
// SameSite=Strict, Path=/, Secure over TLS, 30 days), an HMAC of the token
// — a new token ends every session, a restart keeps them. Every later
// request of the page, WebSocket and EventSource included, carries it;
// cross-site requests never do. DELETE /api/v1/session signs out. On
// loopback no token or cookie is needed, and the Origin rules still hold.
//
// Every error is JSON {"error": {"message", "type"}} with a message that
// says what to do.
//
// It talks to main-virtual and the observers through interfaces declared
// here (Agent, Observers) over shared values (package turn,
// packets.ObserverStatus), never importing them: they are peers.
//
// It may import turn, tools, packets, events, generate, store, llm, config,
// memory, recall, importer, journal, router, supervise, tts, bridge,
// archive, metrics, glob, persona and persona/vrm.
package api
