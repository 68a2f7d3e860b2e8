// main.js — the companion page: the conversation (streamed replies,
// proactive messages), the voice (speech events played in order, with
// subtitles and the avatar), the text box, mute and volume, and the
// browser's own speech recognition as an optional microphone.

import { call, getJSON, readEvents, follow, signIn } from './api.js';
import { Avatar } from './avatar.js';
import { Player } from './player.js';

const params = new URLSearchParams(location.search);
const channel = params.get('channel') || 'desktop';
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

function bubble(role, text, opts = {}) {
  const li = document.createElement('li');
  li.className = role + (opts.proactive ? ' proactive' : '');
  li.textContent = text;
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
  // A reply of the live turn settles its streamed bubble.
  const turn = m.role === 'assistant' && turns.get(m.reply_to);
  if (turn) {
    stored(turn, m.id, m.text);
    return;
  }
  const later = [...log.children].find((li) => li.dataset.time && m.time && li.dataset.time > m.time);
  const li = bubble(m.role, m.text, { id: m.id, proactive: m.proactive, before: later });
  if (m.time) li.dataset.time = m.time;
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

/** A stored reply of the live turn: it settles the next bubble. */
function stored(turn, id, text) {
  if (shown.has(id)) return;
  const li = part(turn, turn.s++);
  li.classList.remove('streaming');
  li.textContent = text;
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
  onStart(sp) {
    avatar.setEmotion(sp.emotion);
    const sub = $('subtitle');
    sub.textContent = sp.text;
    sub.dataset.lang = sp.language || '';
    sub.dataset.seq = String(sp.seq);
  },
  onEnd() { avatar.setEmotion('neutral'); },
  onLevel(level) { avatar.setLevel(level); },
  onError(sp, msg) {
    // Said once: the text stays on screen either way.
    if (voiceErrors.has(msg)) return;
    voiceErrors.add(msg);
    $('voice-note').textContent = 'voice: ' + msg;
    console.warn('voice:', msg);
  },
});

function setupControls() {
  const mute = $('mute');
  const vol = $('volume');
  const saved = JSON.parse(localStorage.getItem('cyan.sound') || '{}');
  if (typeof saved.volume === 'number') vol.value = saved.volume;
  const apply = (muted) => {
    mute.setAttribute('aria-pressed', String(muted));
    mute.textContent = muted ? '🔇' : '🔊';
    player.setMuted(muted);
    player.setVolume(Number(vol.value));
    localStorage.setItem('cyan.sound', JSON.stringify({ muted, volume: Number(vol.value) }));
  };
  apply(!!saved.muted);
  mute.addEventListener('click', () => apply(mute.getAttribute('aria-pressed') !== 'true'));
  vol.addEventListener('input', () => apply(mute.getAttribute('aria-pressed') === 'true'));
  for (const ev of ['pointerdown', 'keydown']) document.addEventListener(ev, () => player.unlock(), { passive: true });
}

// Sending: the reply streams into bubbles; "@br" starts a new one.
async function send(text) {
  const mine = bubble('user', text);
  let resp;
  try {
    resp = await call('/api/v1/messages', { method: 'POST', body: { channel, user, text, stream: true } });
  } catch (e) {
    mine.classList.add('failed');
    notice('not sent: ' + e.message);
    return;
  }
  if (!resp.ok) {
    const body = await resp.json().catch(() => ({}));
    if (body?.error?.message_id) { mine.dataset.id = body.error.message_id; shown.set(body.error.message_id, mine); }
    notice(body?.error?.message || `not answered (${resp.status})`);
    return;
  }
  const turn = { turn: '', parts: [], d: 0, s: 0 };
  try {
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
          if (!li.dataset.id) li.textContent += data.text; // a settled one has its whole text
          scrollDown();
          break;
        }
        case 'break':
          if (turn.parts.length > turn.d) turn.d++;
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
    });
  } finally {
    for (const li of turn.parts) if (!li.textContent) li.remove(); else li.classList.remove('streaming');
  }
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
  });
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
}

async function start() {
  await signIn();
  const persona = await getJSON('/api/v1/persona?' + new URLSearchParams({ channel }));
  document.title = persona.name;
  $('name').textContent = persona.name;
  avatar = new Avatar($('avatar'), persona);
  if (!persona.voiced) $('voice-note').textContent = `channel ${channel} is not voiced (tts.channels)`;
  setupControls();
  setupComposer();
  // The stream first, then the history: whatever is stored in between is
  // in one or the other (shown once, by id). Each reconnection re-reads
  // the history, so a dropped stream misses nothing either.
  let first = true;
  const since = sessionStorage.getItem('cyan.last-event.' + channel);
  follow(channel, since, {
    ready: () => {
      loadHistory().catch((e) => notice('history: ' + e.message)).finally(() => {
        if (first) { first = false; document.body.dataset.ready = 'true'; }
      });
    },
    message: (m) => showMessage(m),
    speech: (sp) => player.add(sp),
    lagged: () => loadHistory().catch(() => {}),
  });
}

start().catch((e) => {
  notice(e.message);
  console.warn(e);
});
