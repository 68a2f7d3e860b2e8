// vrm.js — the persona's VRM model (avatar.vrm, VRM 0.x or 1.0) drawn with
// three.js and @pixiv/three-vrm (vendored under app/vendor/, loaded from
// the daemon only when the persona has a model). It takes over the drawn
// face's place: the expression follows each spoken segment's emotion by
// EXPRESSIONS, eased in and out; the mouth follows the playing audio
// (visemes aa/ih/ou/ee/oh from loudness and three spectral bands of the
// player's AnalyserNode) and closes between segments; it blinks, breathes
// and turns its head toward the pointer when quiet. A model that fails to
// load, or a browser without WebGL, leaves the drawn face and says why.
// window.cyanAvatar exposes its state (kind, error, frames, weights()) for
// tests and for anyone curious.

// cyan's emotions → VRM 1.0 expression weights. three-vrm reads a VRM 0.x
// model's blend shape presets under the 1.0 names, so the 0.x names are:
//   emotion     VRM 1.0 expressions            VRM 0.x blend shapes
//   neutral     neutral 1                      neutral
//   happy       happy 1                        joy
//   excited     happy .7, surprised .3         joy (+ surprised, 1.0 only)
//   gentle      relaxed .8                     fun
//   sad         sad 1                          sorrow
//   ask         surprised .35                  (none in 0.x)
//   surprised   surprised 1                    (none in 0.x)
//   angry       angry 1                        angry
// An emotion the table does not know is neutral.
export const EXPRESSIONS = {
  neutral: { neutral: 1 },
  happy: { happy: 1 },
  excited: { happy: 0.7, surprised: 0.3 },
  gentle: { relaxed: 0.8 },
  sad: { sad: 1 },
  ask: { surprised: 0.35 },
  surprised: { surprised: 1 },
  angry: { angry: 1 },
};
const MOODS = ['neutral', 'happy', 'angry', 'sad', 'relaxed', 'surprised'];
const VISEMES = ['aa', 'ih', 'ou', 'ee', 'oh'];
// Seconds an expression takes to ease most of the way (in and out).
const EASE = 0.25;
const MOUTH_EASE = 0.06;

const state = {
  kind: 'face', // 'vrm' once the model draws
  error: '',
  frames: 0,
  firstFrameMs: 0, // from mountVRM's start
  firstFrameAt: 0, // from the page's navigation
  emotion: 'neutral',
  level: 0,
  blinks: 0, // blinks so far
  weights: () => ({}),
  look: () => ({ yaw: 0, pitch: 0 }), // the head's turn, radians: + is toward the viewer's right, + down
};
window.cyanAvatar = state;

function webgl() {
  try {
    const c = document.createElement('canvas');
    return !!(c.getContext('webgl2') || c.getContext('webgl'));
  } catch {
    return false;
  }
}

function say(el, text) {
  state.error = text;
  let p = el.parentElement.querySelector('#avatar-note');
  if (!p) {
    p = document.createElement('p');
    p.id = 'avatar-note';
    p.setAttribute('role', 'status');
    el.insertAdjacentElement('afterend', p);
  }
  p.textContent = text;
}

/**
 * Shows persona.vrm in el in place of the drawn face, driven by avatar's
 * setEmotion/setLevel calls and player's analyser. Resolves when it draws
 * (or has fallen back to the face, saying why).
 * @param {HTMLElement} el @param {{vrm: string, vrm_expressions?: Object<string, Object<string, number>>}} persona
 * @param {{setEmotion(name): void, setLevel(l): void}} avatar @param {{analyser?: AnalyserNode}} player
 */
export async function mountVRM(el, persona, avatar, player) {
  const t0 = performance.now();
  await new Promise((resolve) => {
    const link = document.createElement('link');
    link.rel = 'stylesheet';
    link.href = '/app/vrm.css';
    link.onload = link.onerror = resolve;
    document.head.append(link);
  });
  if (!webgl()) {
    say(el, 'this browser has no WebGL: the 3D avatar is off');
    return;
  }
  let THREE, GLTFLoader, VRM;
  try {
    THREE = await import('./vendor/three/three.module.js');
    ({ GLTFLoader } = await import('./vendor/three/addons/loaders/GLTFLoader.js'));
    VRM = await import('./vendor/three-vrm/three-vrm.module.js');
  } catch (e) {
    say(el, `the 3D avatar's scripts did not load (${e.message})`);
    return;
  }
  let vrm;
  try {
    const loader = new GLTFLoader();
    loader.register((parser) => new VRM.VRMLoaderPlugin(parser));
    const gltf = await loader.loadAsync(persona.vrm);
    vrm = gltf.userData.vrm;
    if (!vrm) throw new Error('the file is glTF but not VRM (no VRM or VRMC_vrm extension)');
    if (!vrm.expressionManager) throw new Error('the model has no expressions');
    VRM.VRMUtils.rotateVRM0(vrm);
  } catch (e) {
    say(el, `avatar.vrm did not load: ${e.message || e}; showing the drawn face`);
    console.warn('avatar.vrm', e);
    return;
  }

  const canvas = document.createElement('canvas');
  canvas.setAttribute('aria-label', persona.name || 'avatar');
  const renderer = new THREE.WebGLRenderer({ canvas, antialias: true, alpha: true, preserveDrawingBuffer: true });
  renderer.setPixelRatio(Math.min(2, window.devicePixelRatio || 1));
  renderer.outputColorSpace = THREE.SRGBColorSpace;
  const scene = new THREE.Scene();
  scene.add(new THREE.AmbientLight(0xffffff, 1.2));
  const sun = new THREE.DirectionalLight(0xffffff, 1.6);
  sun.position.set(1, 1.5, 2);
  scene.add(sun);
  scene.add(vrm.scene);
  const camera = new THREE.PerspectiveCamera(26, 1, 0.05, 20);

  // Frame the upper body: from the head's top to a little below the
  // chest, whatever the canvas's shape.
  const head = vrm.humanoid?.getNormalizedBoneNode('head');
  const box = new THREE.Box3().setFromObject(vrm.scene);
  const top = box.max.y;
  const headY = head ? head.getWorldPosition(new THREE.Vector3()).y : top - (box.max.y - box.min.y) * 0.1;
  const span = Math.max(0.25, (top - headY) * 3.4); // head top to the waist
  const centre = new THREE.Vector3((box.min.x + box.max.x) / 2, top - span / 2, (box.min.z + box.max.z) / 2);
  const frame = () => {
    const w = el.clientWidth || 260;
    const h = el.clientHeight || 260;
    renderer.setSize(w, h, false);
    camera.aspect = w / h;
    const vfov = THREE.MathUtils.degToRad(camera.fov);
    // Fit the span in height, and its width (≈ .9 × span) in width.
    const fitH = span / 2 / Math.tan(vfov / 2);
    const fitW = (span * 0.9) / 2 / Math.tan(vfov / 2) / camera.aspect;
    camera.position.set(centre.x, centre.y, centre.z + 1.1 * Math.max(fitH, fitW));
    camera.lookAt(centre);
    camera.updateProjectionMatrix();
  };

  el.classList.add('vrm');
  el.replaceChildren(canvas);
  frame();
  new ResizeObserver(frame).observe(el);

  const em = vrm.expressionManager;
  const has = (n) => !!em.getExpression(n);
  const target = {};
  const now = {};
  for (const n of [...MOODS, ...VISEMES, 'blink']) { target[n] = 0; now[n] = 0; }
  // The persona may override the table, emotion by emotion
  // (its folder's avatar-expressions.json, served as vrm_expressions).
  const table = { ...EXPRESSIONS, ...(persona.vrm_expressions || {}) };
  const moods = new Set(MOODS);
  for (const row of Object.values(table)) for (const n of Object.keys(row)) moods.add(n);
  for (const n of moods) { target[n] = 0; now[n] = 0; }
  const setMood = (emotion) => {
    state.emotion = table[emotion] ? emotion : 'neutral';
    for (const n of moods) target[n] = 0;
    for (const [n, w] of Object.entries(table[state.emotion])) target[n] = w;
  };
  setMood('neutral');

  // Hook the drawn face's calls: the page keeps calling them as before.
  const setEmotion = avatar.setEmotion.bind(avatar);
  const setLevel = avatar.setLevel.bind(avatar);
  avatar.setEmotion = (name) => { setEmotion(name); setMood(name); };
  avatar.setLevel = (l) => { setLevel(l); state.level = Math.max(0, Math.min(1, l)); };

  // The pointer, as -1…1 across the window.
  const pointer = { x: 0, y: 0 };
  window.addEventListener('pointermove', (e) => {
    pointer.x = (e.clientX / window.innerWidth) * 2 - 1;
    pointer.y = (e.clientY / window.innerHeight) * 2 - 1;
  }, { passive: true });

  let bins = null;
  const visemes = () => {
    const out = { aa: 0, ih: 0, ou: 0, ee: 0, oh: 0 };
    const level = state.level;
    const an = player.analyser;
    if (level < 0.02 || !an) return out;
    if (!bins || bins.length !== an.frequencyBinCount) bins = new Uint8Array(an.frequencyBinCount);
    an.getByteFrequencyData(bins);
    const hz = an.context.sampleRate / an.fftSize;
    const band = (lo, hi) => {
      let s = 0, n = 0;
      for (let i = Math.floor(lo / hz); i < Math.min(bins.length, Math.ceil(hi / hz)); i++, n++) s += bins[i];
      return n ? s / n : 0;
    };
    // Low (first formant of o/u), mid (a's), high (e/i's second formant).
    const lo = band(150, 700), mid = band(700, 1600), hi = band(1600, 4000);
    const sum = lo + mid + hi || 1;
    const l = lo / sum, m = mid / sum, h = hi / sum;
    const raw = { aa: m, oh: l * 0.6 + m * 0.2, ou: l * 0.5, ee: h * 0.7, ih: h * 0.4 + m * 0.2 };
    const top = Math.max(...Object.values(raw)) || 1;
    const open = Math.min(1, level * 1.5);
    for (const k of VISEMES) out[k] = (raw[k] / top) * open;
    return out;
  };

  state.weights = () => {
    const w = {};
    for (const n of [...moods, ...VISEMES, 'blink']) w[n] = has(n) ? em.getValue(n) : 0;
    return w;
  };

  const clock = new THREE.Clock();
  let blinkAt = 2 + Math.random() * 3;
  let t = 0;
  const neck = vrm.humanoid?.getNormalizedBoneNode('neck');
  const chest = vrm.humanoid?.getNormalizedBoneNode('chest') || vrm.humanoid?.getNormalizedBoneNode('spine');
  const approach = (a, b, dt, k) => a + (b - a) * (1 - Math.exp(-dt / k));
  const pitchSign = vrm.meta?.metaVersion === '0' ? -1 : 1;
  state.look = () => ({ yaw: (head || neck)?.rotation.y || 0, pitch: pitchSign * (head?.rotation.x || 0) });
  const tick = () => {
    const dt = Math.min(0.1, clock.getDelta());
    t += dt;
    // Blink: a 150 ms close-open every 2–6 s.
    const sinceBlink = t - blinkAt;
    target.blink = sinceBlink > 0 && sinceBlink < 0.15 ? Math.sin((sinceBlink / 0.15) * Math.PI) : 0;
    if (sinceBlink >= 0.15) { blinkAt = t + 2 + Math.random() * 4; state.blinks++; }
    const mouth = visemes();
    for (const n of VISEMES) target[n] = mouth[n];
    for (const n of Object.keys(target)) {
      const k = n === 'blink' ? 0.02 : VISEMES.includes(n) ? MOUTH_EASE : EASE;
      now[n] = approach(now[n], target[n], dt, k);
      if (now[n] < 0.001) now[n] = 0;
      if (has(n)) em.setValue(n, now[n]);
    }
    // Breathing and the head toward the pointer.
    if (chest) chest.rotation.x = Math.sin(t * 1.6) * 0.015;
    vrm.scene.position.y = Math.sin(t * 1.6) * 0.002;
    if (head) {
      // A VRM 0.x model's normalized bones turn about X the other way
      // (it faces -Z; three-vrm's own retargeting example flips x and z).
      head.rotation.y = approach(head.rotation.y, pointer.x * 0.35, dt, 0.3);
      head.rotation.x = approach(head.rotation.x, pitchSign * pointer.y * 0.2, dt, 0.3);
    } else if (neck) {
      neck.rotation.y = approach(neck.rotation.y, pointer.x * 0.35, dt, 0.3);
    }
    vrm.update(dt);
    renderer.render(scene, camera);
    state.frames++;
    if (state.frames === 1) {
      state.kind = 'vrm';
      state.firstFrameMs = Math.round(performance.now() - t0);
      state.firstFrameAt = Math.round(performance.now());
      el.dataset.vrm = 'ready';
    }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}
