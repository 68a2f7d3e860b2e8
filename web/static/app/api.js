// api.js — the daemon's HTTP API as the page uses it. Same origin only; on
// a non-loopback bind the daemon asks for its token once, and the page
// trades it for a session cookie (POST /api/v1/session): never a token in
// a URL, never kept in storage.

let loggingIn = null;

/** Asks for the token once and trades it for the session cookie. */
function login() {
  if (loggingIn) return loggingIn;
  loggingIn = new Promise((resolve) => {
    const dlg = document.getElementById('login');
    const form = document.getElementById('login-form');
    const input = document.getElementById('token');
    const err = document.getElementById('login-error');
    form.addEventListener('submit', async function onSubmit(ev) {
      ev.preventDefault();
      const r = await fetch('/api/v1/session', {
        method: 'POST', credentials: 'same-origin',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ token: input.value.trim() }),
      });
      if (!r.ok) {
        err.textContent = r.status === 404
          ? 'This daemon cannot give the page a session; open the page on its own machine (127.0.0.1).'
          : 'That token was refused.';
        return;
      }
      input.value = '';
      form.removeEventListener('submit', onSubmit);
      dlg.close();
      loggingIn = null;
      resolve();
    });
    dlg.showModal();
  });
  return loggingIn;
}

/** fetch with the session: a 401 asks for the token, then retries once. */
export async function call(path, opts = {}) {
  const init = { credentials: 'same-origin', ...opts, headers: { ...(opts.headers || {}) } };
  if (init.body !== undefined && typeof init.body !== 'string') {
    init.body = JSON.stringify(init.body);
    init.headers['Content-Type'] = 'application/json';
  }
  let r = await fetch(path, init);
  if (r.status === 401) {
    await login();
    r = await fetch(path, init);
  }
  return r;
}

/** GET a JSON document; throws with the API's message. */
export async function getJSON(path) {
  const r = await call(path);
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(body?.error?.message || `${path}: ${r.status}`);
  return body;
}

/**
 * Reads server-sent events from a fetch response body, calling on(name,
 * data) for each; resolves when the body ends.
 */
export async function readEvents(resp, on) {
  const reader = resp.body.getReader();
  const dec = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      let name = 'message';
      const data = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) name = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (data.length === 0) continue;
      let parsed;
      try { parsed = JSON.parse(data.join('\n')); } catch { parsed = data.join('\n'); }
      on(name, parsed);
    }
  }
}

/**
 * Follows the channel's stream (EventSource reconnects by itself and sends
 * Last-Event-ID where the daemon numbers its events). handlers maps event
 * names to functions; "ready" fires on every (re)connection.
 */
export function follow(channel, since, handlers) {
  const q = new URLSearchParams({ channel });
  if (since) q.set('since', since);
  const es = new EventSource('/api/v1/stream?' + q);
  for (const [name, fn] of Object.entries(handlers)) {
    es.addEventListener(name, (ev) => {
      if (ev.lastEventId) sessionStorage.setItem('cyan.last-event.' + channel, ev.lastEventId);
      let data;
      try { data = JSON.parse(ev.data); } catch { data = ev.data; }
      fn(data);
    });
  }
  return es;
}
