// main.js — the companion page: the conversation (the character's greeting
// when the page opens on an empty channel, streamed replies, proactive
// messages, rendered markdown), the voice (speech events played in order,
// with subtitles and the avatar; a new message interrupts the old reply's
// speech), the text box with a stop button, the connection's state, unsent
// messages marked and retried, the settings (voice on/off, volume, which
// voice, what *actions* become), and the
// browser's own speech recognition as an optional microphone.

import { call, getJSON, readEvents, follow, signIn } from './api.js';
import { Avatar } from './avatar.js';
import { Player } from './player.js';
import { render } from './markdown.js';
import { cleanFragment } from './subtitle.js';

const params = new URLSearchParams(location.search);
// The conversation: ?channel= names one; without it, the page's channel of
// the daemon's persona, as GET /api/v1/persona names it ("desktop" for the
// built-in persona, "desktop:<id>" for another: each character its own
// conversation). Set once, in start(), before anything is read or sent.
const chosenChannel = params.get('channel') || '';
let channel = chosenChannel || 'desktop';
// The page sends a name only when one is set (?user= or localStorage
// cyan.user), never one of its own making: ownership is the "local" owner
// entry (a private message without a chat-app id), not a name.
const user = params.get('user') || localStorage.getItem('cyan.user') || '';
const $ = (id) => document.getElementById(id);
const log = $('log');

// Bubbles by message id, and the live turn: its bubbles in order, the one
// the streamed text goes to (d) and the next a stored reply settles (s).
// Stored replies come both on the reply's own stream and on the channel's,
// in either order; each settles one bubble, once.
const shown = new Map();
const turns = new Map(); // turn id → {turn, parts: [li], d, s}, for the turns sent from here
// What the page went through, for tests and for anyone curious: the events
// of each sent message's stream, in order.
window.cyanEvents = [];

function scrollDown() { log.scrollTop = log.scrollHeight; }

/** Sets a bubble's text: the character's rendered as markdown. */
function setText(li, text) {
  li.raw = text;
  if (li.classList.contains('user')) {
    const span = li.querySelector('.text') || li.appendChild(document.createElement('span'));
    span.className = 'text';
    span.textContent = text;
  } else {
    li.innerHTML = render(text);
  }
}

function bubble(role, text, opts = {}) {
  const li = document.createElement('li');
  li.className = role + (opts.proactive ? ' proactive' : '');
  setText(li, text);
  if (opts.id) { li.dataset.id = opts.id; shown.set(opts.id, li); }
  if (opts.before) log.insertBefore(li, opts.before); else log.appendChild(li);
  scrollDown();
  return li;
}

/** Shows a stored message once, in time order. */
function showMessage(m) {
  if (!m.id || shown.has(m.id)) return;
  if (m.role !== 'user' && m.role !== 'assistant') return;
  if (m.empty_reply || !m.text) return;
  // The channel's stream may show a message this page is sending before
  // the send's own answer names it: that message is the bubble already
  // shown, not a second one.
  if (m.role === 'user') {
    const mine = [...log.querySelectorAll('li.user')].find((li) => !li.dataset.id && li.sending && li.sending.text === m.text);
    if (mine) {
      mine.dataset.id = m.id;
      shown.set(m.id, mine);
      return;
    }
  }
  // A reply of the live turn settles its streamed bubble.
  const turn = m.role === 'assistant' && turns.get(m.reply_to);
  if (turn) {
    stored(turn, m.id, m.text);
    return;
  }
  const later = [...log.children].find((li) => li.dataset.time && m.time && li.dataset.time > m.time);
  const li = bubble(m.role, m.text, { id: m.id, proactive: m.proactive, before: later });
  if (m.time) li.dataset.time = m.time;
  if (m.incomplete) markCut(li, 'the model stopped mid-answer');
}

/** Marks a reply the model's server cut off: it is not a whole answer. */
function markCut(li, why) {
  if (!li || li.classList.contains('cut')) return;
  li.classList.add('cut');
  li.title = 'cut off: ' + why;
}

/** The i-th bubble of a live turn, made when it does not exist yet. */
function part(turn, i) {
  while (turn.parts.length <= i) {
    const li = bubble('assistant', '');
    li.classList.add('streaming');
    turn.parts.push(li);
  }
  return turn.parts[i];
}

/**
 * A stored reply of the live turn: it settles the next bubble. A reply
 * already shown on its own (the channel's stream can be first) keeps that
 * bubble, and the streamed copy goes: the page never shows a reply twice.
 */
function stored(turn, id, text) {
  const li = part(turn, turn.s++);
  const other = shown.get(id);
  if (other && other !== li) {
    if (!li.dataset.id) li.remove();
    return;
  }
  li.classList.remove('streaming');
  setText(li, text);
  li.dataset.id = id;
  shown.set(id, li);
  scrollDown();
}

let noticeTimer = 0;
function notice(text) {
  const n = $('notice');
  n.textContent = text;
  n.hidden = !text;
  clearTimeout(noticeTimer);
  if (text) noticeTimer = setTimeout(() => { n.hidden = true; }, 8000);
}

// The voice.
let avatar;
const voiceErrors = new Set();
const player = new Player({
  fetch: (url) => call(url),
  voice: () => localStorage.getItem('cyan.voice') || '',
  synthesize: (sp, voice) => call('/api/v1/speech', {
    method: 'POST',
    body: { segments: [{ text: sp.text, language: sp.language || '', emotion: sp.emotion || '' }], voice },
  }),
  onStart(sp) {
    avatar.setEmotion(sp.emotion);
    const sub = $('subtitle');
    sub.textContent = cleanFragment(sp.text);
    sub.dataset.lang = sp.language || '';
    sub.dataset.seq = String(sp.seq);
  },
  onEnd() { avatar.setEmotion('neutral'); busy(); },
  onLevel(level) { avatar.setLevel(level); },
  onError(sp, msg) {
    // Said once: the text stays on screen either way.
    if (voiceErrors.has(msg)) return;
    voiceErrors.add(msg);
    $('voice-note').textContent = 'voice: ' + msg;
    console.warn('voice:', msg);
  },
});

function setupControls(persona) {
  const mute = $('mute');
  const voiceOn = $('voice-on');
  const vol = $('volume');
  const saved = JSON.parse(localStorage.getItem('cyan.sound') || '{}');
  if (typeof saved.volume === 'number') vol.value = saved.volume;
  const apply = (muted) => {
    mute.setAttribute('aria-pressed', String(muted));
    mute.textContent = '♪';
    mute.classList.toggle('off', muted);
    mute.title = muted ? 'voice off' : 'voice on';
    voiceOn.checked = !muted;
    player.setMuted(muted);
    player.setVolume(Number(vol.value));
    $('volume-value').textContent = Math.round(Number(vol.value) * 100) + '%';
    localStorage.setItem('cyan.sound', JSON.stringify({ muted, volume: Number(vol.value) }));
  };
  apply(!!saved.muted);
  mute.addEventListener('click', () => apply(mute.getAttribute('aria-pressed') !== 'true'));
  voiceOn.addEventListener('change', () => apply(!voiceOn.checked));
  vol.addEventListener('input', () => apply(mute.getAttribute('aria-pressed') === 'true'));
  const voice = $('voice-name');
  voice.value = localStorage.getItem('cyan.voice') || '';
  voice.addEventListener('change', () => {
    const v = voice.value.trim();
    if (v) localStorage.setItem('cyan.voice', v); else localStorage.removeItem('cyan.voice');
  });
  // What *actions* become: the daemon's voice setting (PUT
  // /api/v1/speech/actions); the choice is kept here and sent again each
  // time the page opens, since the daemon starts from tts.actions.
  const actions = $('actions');
  const putActions = async (mode) => {
    const r = await call('/api/v1/speech/actions', { method: 'PUT', body: { actions: mode } });
    const body = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(body?.error?.message || `actions: ${r.status}`);
    actions.value = body.actions;
  };
  actions.value = persona.actions || 'skip';
  actions.disabled = !persona.actions;
  const chosen = localStorage.getItem('cyan.actions');
  if (persona.actions && chosen && chosen !== persona.actions) putActions(chosen).catch((e) => notice(e.message));
  actions.addEventListener('change', () => {
    localStorage.setItem('cyan.actions', actions.value);
    putActions(actions.value).catch((e) => notice(e.message));
  });
  const panel = $('settings');
  $('open-settings').addEventListener('click', () => {
    panel.hidden = !panel.hidden;
    $('open-settings').setAttribute('aria-expanded', String(!panel.hidden));
  });
  for (const ev of ['pointerdown', 'keydown']) document.addEventListener(ev, () => player.unlock(), { passive: true });
}

// The connection: online while the channel's stream is open; a message
// that could not be sent waits, marked, and is sent again (with the same
// idempotency key, so never twice) when the daemon is back or on "retry".
let online = false;
function connection(state, detail = '') {
  const el = $('conn');
  el.dataset.state = state;
  el.textContent = { online: 'connected', connecting: 'connecting…', offline: 'offline' }[state] || state;
  el.title = detail || el.textContent;
  document.body.dataset.connection = state;
  const was = online;
  online = state === 'online';
  if (online && !was) for (const li of [...log.querySelectorAll('li.failed')]) li.retry?.();
}

// The live replies, for the stop button.
const live = new Set();
function busy() {
  const on = live.size > 0 || player.active;
  $('stop').hidden = !on;
  $('send').hidden = on && !$('text').value.trim();
}

// Sending: the reply streams into bubbles; "@br" starts a new one. A new
// message interrupts the voice of the replies before it.
function newKey() {
  return 'web-' + (crypto.randomUUID ? crypto.randomUUID() : Date.now().toString(36) + Math.random().toString(36).slice(2));
}

async function send(text, mine = null, key = newKey()) {
  player.interrupt(...turns.keys());
  $('subtitle').textContent = '';
  if (!mine) mine = bubble('user', text);
  mine.sending = { text };
  mine.classList.remove('failed');
  mine.querySelector('.retry')?.remove();
  const unsent = (why) => {
    mine.classList.add('failed');
    mine.title = why;
    mine.retry = () => send(text, mine, key);
    if (!mine.querySelector('.retry')) {
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'retry';
      b.textContent = 'retry';
      b.addEventListener('click', () => mine.retry());
      mine.appendChild(b);
    }
    notice('not sent: ' + why);
  };
  const ctl = new AbortController();
  const turn = { turn: '', parts: [], d: 0, s: 0, ctl };
  live.add(turn);
  busy();
  try {
    let resp;
    try {
      resp = await call('/api/v1/messages', { method: 'POST', body: { channel, user, text, stream: true, message_id: key }, signal: ctl.signal });
    } catch (e) {
      if (ctl.signal.aborted) return;
      connection('offline', e.message);
      unsent(e.message);
      return;
    }
    if (!resp.ok) {
      const body = await resp.json().catch(() => ({}));
      if (body?.error?.message_id) {
        mine.dataset.id = body.error.message_id;
        shown.set(body.error.message_id, mine);
        notice(body?.error?.message || `not answered (${resp.status})`);
      } else if (resp.status >= 500 || resp.status === 429) {
        unsent(body?.error?.message || `the daemon answered ${resp.status}`);
      } else {
        notice(body?.error?.message || `not answered (${resp.status})`);
        mine.classList.add('failed');
      }
      return;
    }
    mine.retry = null;
    await readEvents(resp, (name, data) => {
      window.cyanEvents.push(name);
      switch (name) {
        case 'message':
          turn.turn = data.message_id;
          turns.set(data.message_id, turn);
          mine.dataset.id = data.message_id;
          shown.set(data.message_id, mine);
          break;
        case 'delta': {
          const li = part(turn, turn.d);
          if (!li.dataset.id) setText(li, (li.raw || '') + data.text); // a settled one has its whole text
          scrollDown();
          break;
        }
        case 'break':
          if (turn.parts.length > turn.d) turn.d++;
          break;
        case 'cut':
          markCut(turn.parts[turn.parts.length - 1], data.reason || 'the model stopped mid-answer');
          notice('the answer was cut off: the model stopped mid-answer');
          break;
        case 'reply':
          stored(turn, data.id, data.text);
          break;
        case 'error':
          notice(data?.error?.message || 'the answer failed');
          break;
        case 'done':
          if (data.warning) notice(data.warning);
          break;
      }
    }, ctl.signal).catch((e) => {
      if (!ctl.signal.aborted) notice('the reply was cut off (' + e.message + '); it will show when it is stored');
    });
  } finally {
    live.delete(turn);
    busy();
    for (const li of turn.parts) if (!li.raw && !li.dataset.id) li.remove(); else li.classList.remove('streaming');
  }
}

/**
 * Stop: the page stops showing the replies as they stream and stops
 * speaking. The daemon finishes the turn (a turn outlives its client): its
 * reply is shown whole when it is stored.
 */
function stop() {
  for (const t of live) t.ctl.abort();
  player.interrupt(...turns.keys());
  $('subtitle').textContent = '';
  avatar.setEmotion('neutral');
  busy();
}

function setupComposer() {
  const form = $('composer');
  const box = $('text');
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const text = box.value.trim();
    if (!text) return;
    box.value = '';
    send(text);
  });
  box.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) { ev.preventDefault(); form.requestSubmit(); }
    if (ev.key === 'Escape') stop();
  });
  box.addEventListener('input', busy);
  $('stop').addEventListener('click', stop);
  // The browser's own speech recognition, where it has one.
  const SR = window.SpeechRecognition || window.webkitSpeechRecognition;
  if (!SR) return;
  const mic = $('mic');
  mic.hidden = false;
  let rec = null;
  mic.addEventListener('click', () => {
    if (rec) { rec.stop(); return; }
    rec = new SR();
    rec.lang = navigator.language || 'zh-CN';
    rec.interimResults = true;
    mic.setAttribute('aria-pressed', 'true');
    rec.onresult = (ev) => {
      const r = ev.results[ev.results.length - 1];
      box.value = r[0].transcript;
      if (r.isFinal) { rec.stop(); form.requestSubmit(); }
    };
    rec.onerror = (ev) => notice('microphone: ' + ev.error);
    rec.onend = () => { rec = null; mic.setAttribute('aria-pressed', 'false'); };
    rec.start();
  });
}

async function loadHistory() {
  const { messages } = await getJSON('/api/v1/messages?' + new URLSearchParams({ channel, limit: '200' }));
  for (const m of messages) showMessage(m);
  return messages.length;
}

/**
 * A channel opened for the first time opens with the character's greeting,
 * at the top, before anyone speaks, as SillyTavern shows it: the daemon
 * stores it once (so it is voiced once), and it comes back here and on the
 * channel's stream, shown once by its id.
 */
async function greet() {
  const r = await call('/api/v1/greeting', { method: 'POST', body: { channel, user } });
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(body?.error?.message || `greeting: ${r.status}`);
  if (body.message) showMessage(body.message);
}

/**
 * The persona and the conversation the page is in: ?channel= when given,
 * else the persona's own page channel.
 */
async function whoAmI() {
  const q = chosenChannel ? '?' + new URLSearchParams({ channel: chosenChannel }) : '';
  const persona = await getJSON('/api/v1/persona' + q);
  if (!chosenChannel && persona.channel) channel = persona.channel;
  return persona;
}

/** Shows which character this is, and which conversation the page is in. */
function showWho(persona) {
  document.title = persona.name;
  const name = $('name');
  name.textContent = persona.name;
  const conv = document.createElement('small');
  conv.id = 'conversation';
  conv.textContent = channel;
  conv.title = 'conversation ' + channel;
  name.append(' ', conv);
  document.body.dataset.channel = channel;
  document.body.dataset.persona = persona.id || '';
}

/**
 * When the daemon comes back with another persona (its config changed,
 * cyan persona use), a page that follows the persona's own conversation
 * opens the new character's: it reloads.
 */
async function checkPersona(persona) {
  if (chosenChannel) return;
  const now = await getJSON('/api/v1/persona');
  if ((now.channel || 'desktop') !== channel || now.name !== persona.name) location.reload();
}

async function start() {
  await signIn();
  const persona = await whoAmI();
  showWho(persona);
  avatar = new Avatar($('avatar'), persona);
  // A persona's avatar.vrm takes the face's place (app/vrm.js, loaded only then).
  if (persona.vrm) import('./vrm.js').then((m) => m.mountVRM($('avatar'), persona, avatar, player)).catch((e) => notice('avatar: ' + e.message));
  if (!persona.voiced) $('voice-note').textContent = `channel ${channel} is not voiced (tts.channels)`;
  setupControls(persona);
  setupComposer();
  // The stream first, then the history: whatever is stored in between is
  // in one or the other (shown once, by id). Each reconnection re-reads
  // the history, so a dropped stream misses nothing either.
  let first = true;
  const since = sessionStorage.getItem('cyan.last-event.' + channel);
  connection('connecting');
  follow(channel, since, {
    ready: () => {
      connection('online');
      if (!first) checkPersona(persona).catch(() => {});
      loadHistory()
        .then((n) => (first && n === 0 ? greet() : null))
        .catch((e) => notice('history: ' + e.message))
        .finally(() => {
          if (first) { first = false; document.body.dataset.ready = 'true'; }
        });
    },
    message: (m) => showMessage(m),
    speech: (sp) => { player.add(sp); busy(); },
    lagged: () => loadHistory().catch(() => {}),
  }, connection);
}

start().catch((e) => {
  notice(e.message);
  console.warn(e);
});
