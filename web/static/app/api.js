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
    // Without the session nothing works: Escape does not close the dialog.
    const stay = (ev) => ev.preventDefault();
    dlg.addEventListener('cancel', stay);
    form.addEventListener('submit', async function onSubmit(ev) {
      ev.preventDefault();
      err.textContent = '';
      let r;
      try {
        r = await fetch('/api/v1/session', {
          method: 'POST', credentials: 'same-origin',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ token: input.value.trim() }),
        });
      } catch (e) {
        err.textContent = 'The daemon cannot be reached: ' + e.message;
        return;
      }
      if (!r.ok) {
        const body = await r.json().catch(() => ({}));
        err.textContent = r.status === 401
          ? 'That token was refused; copy it from the api-token file in the daemon\'s data folder.'
          : body?.error?.message || `sign-in failed (${r.status})`;
        input.select();
        return;
      }
      input.value = '';
      form.removeEventListener('submit', onSubmit);
      dlg.removeEventListener('cancel', stay);
      dlg.close();
      loggingIn = null;
      resolve();
    });
    dlg.showModal();
    input.focus();
  });
  return loggingIn;
}

/**
 * Makes sure the page has a session: on loopback there is nothing to do;
 * on another address the daemon needs its token, which the page asks for
 * once (the cookie lasts; a reload does not ask again).
 */
export async function signIn() {
  const r = await fetch('/api/v1/session', { credentials: 'same-origin' });
  const s = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(s?.error?.message || `session: ${r.status}`);
  if (s.token_required && !s.authenticated) await login();
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
 * data) for each; resolves when the body ends (rejects when the fetch's
 * signal aborts it or the connection breaks).
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
 * names to functions; "ready" fires on every (re)connection. A stream the
 * daemon refused (the session ended: a new token) signs in again and
 * reopens; one that failed otherwise reopens after a pause. state(s) hears
 * "connecting" and "offline" as the stream loses the daemon ("ready" says
 * it is back).
 */
export function follow(channel, since, handlers, state = () => {}) {
  const open = () => {
    const q = new URLSearchParams({ channel });
    const last = sessionStorage.getItem('cyan.last-event.' + channel) || since;
    if (last) q.set('since', last);
    const es = new EventSource('/api/v1/stream?' + q);
    for (const [name, fn] of Object.entries(handlers)) {
      es.addEventListener(name, (ev) => {
        if (ev.lastEventId) sessionStorage.setItem('cyan.last-event.' + channel, ev.lastEventId);
        let data;
        try { data = JSON.parse(ev.data); } catch { data = ev.data; }
        fn(data);
      });
    }
    es.addEventListener('error', () => {
      if (es.readyState !== EventSource.CLOSED) { state('connecting'); return; } // it reconnects by itself
      state('offline');
      setTimeout(() => signIn().catch(() => {}).finally(open), 2000);
    });
  };
  open();
}
