// avatar.js — the companion's face: an SVG in the persona's colour (or the
// persona's own images, one per emotion) whose expression follows the
// segment being spoken and whose mouth follows the audio's loudness.

const NS = 'http://www.w3.org/2000/svg';

// Each emotion: eyes (path per eye, drawn around its centre), brows, and
// the mouth's resting curve (negative: a frown).
const FACES = {
  neutral:   { eye: 'dot',   brow: 0,   smile: 0.15 },
  happy:     { eye: 'arc',   brow: 0,   smile: 0.6 },
  excited:   { eye: 'arc',   brow: -2,  smile: 0.8 },
  gentle:    { eye: 'half',  brow: 0,   smile: 0.35 },
  sad:       { eye: 'dot',   brow: 6,   smile: -0.45 },
  ask:       { eye: 'dot',   brow: -4,  smile: 0.05, tilt: -6 },
  surprised: { eye: 'round', brow: -6,  smile: 0, o: true },
  angry:     { eye: 'dot',   brow: -7,  smile: -0.3, frown: true },
};

export function emotionOf(name) {
  return FACES[name] ? name : 'neutral';
}

export class Avatar {
  /** @param {HTMLElement} el @param {{color: string, avatars: Object<string,string>}} persona */
  constructor(el, persona) {
    this.el = el;
    this.color = persona.color || '#1D75B3';
    this.images = persona.avatars || {};
    this.emotion = 'neutral';
    this.level = 0;
    document.documentElement.style.setProperty('--accent', this.color);
    if (Object.keys(this.images).length > 0) {
      this.img = document.createElement('img');
      this.img.alt = persona.name || '';
      el.replaceChildren(this.img);
    } else {
      el.replaceChildren(this.#svg());
    }
    this.setEmotion('neutral');
  }

  #svg() {
    const svg = document.createElementNS(NS, 'svg');
    svg.setAttribute('viewBox', '0 0 200 200');
    svg.setAttribute('role', 'img');
    svg.innerHTML = `
      <defs><radialGradient id="shine" cx="40%" cy="35%" r="70%">
        <stop offset="0" stop-color="#fff" stop-opacity=".35"/><stop offset="1" stop-color="#fff" stop-opacity="0"/></radialGradient></defs>
      <g class="head">
        <circle cx="100" cy="104" r="86" fill="${this.color}"/>
        <circle cx="100" cy="104" r="86" fill="url(#shine)"/>
        <ellipse cx="100" cy="116" rx="62" ry="54" fill="#fff" fill-opacity=".92"/>
        <g class="brows" stroke="${this.color}" stroke-width="5" stroke-linecap="round" fill="none">
          <path class="brow l"/><path class="brow r"/></g>
        <g class="eyes" fill="#1c2530" stroke="#1c2530" stroke-width="5" stroke-linecap="round">
          <path class="eye l"/><path class="eye r"/></g>
        <ellipse cx="64" cy="128" rx="9" ry="5" fill="${this.color}" fill-opacity=".25"/>
        <ellipse cx="136" cy="128" rx="9" ry="5" fill="${this.color}" fill-opacity=".25"/>
        <path class="mouth" fill="#8a2f3c" stroke="#1c2530" stroke-width="3" stroke-linejoin="round"/>
      </g>`;
    this.svg = svg;
    return svg;
  }

  /** Shows an emotion's face (unknown ones are neutral). */
  setEmotion(name) {
    this.emotion = emotionOf(name);
    this.el.dataset.emotion = this.emotion;
    if (this.img) {
      this.img.src = this.images[this.emotion] || this.images.neutral || Object.values(this.images)[0];
      return;
    }
    const f = FACES[this.emotion];
    const q = (s) => this.svg.querySelector(s);
    q('.head').setAttribute('transform', f.tilt ? `rotate(${f.tilt} 100 104)` : '');
    const eye = (cx) => {
      const cy = 104;
      switch (f.eye) {
        case 'arc': return { d: `M${cx - 9} ${cy + 3} Q${cx} ${cy - 9} ${cx + 9} ${cy + 3}`, fill: 'none' };
        case 'half': return { d: `M${cx - 9} ${cy} Q${cx} ${cy + 6} ${cx + 9} ${cy}`, fill: 'none' };
        case 'round': return { d: `M${cx} ${cy - 9} a9 9 0 1 0 .01 0Z`, fill: '#1c2530' };
        default: return { d: `M${cx} ${cy - 6} a4 6 0 1 0 .01 0Z`, fill: '#1c2530' };
      }
    };
    for (const [side, cx] of [['l', 74], ['r', 126]]) {
      const e = eye(cx);
      const p = q(`.eye.${side}`);
      p.setAttribute('d', e.d);
      p.setAttribute('fill', e.fill);
      const inner = side === 'l' ? 1 : -1;
      const by = 84 + f.brow;
      const tilt = f.frown ? 6 : f.brow > 0 ? -5 : 0;
      q(`.brow.${side}`).setAttribute('d', `M${cx - 12} ${by - tilt * inner * -1} L${cx + 12} ${by + tilt * inner * -1}`);
    }
    this.#mouth();
  }

  /** Opens the mouth by loudness, 0 (closed) to 1. */
  setLevel(level) {
    this.level = Math.max(0, Math.min(1, level));
    this.el.dataset.speaking = this.level > 0.05 ? 'true' : 'false';
    this.el.style.setProperty('--mouth', this.level.toFixed(3));
    if (!this.img) this.#mouth();
  }

  #mouth() {
    const f = FACES[this.emotion];
    const open = this.level * 18;
    const w = f.o ? 10 : 22;
    const y = 140;
    const curve = f.smile * 14;
    const d = f.o && open < 4
      ? `M${100 - w} ${y} a${w} ${w * 0.9} 0 1 0 .01 0Z`
      : `M${100 - w} ${y} Q100 ${y + curve} ${100 + w} ${y} Q100 ${y + curve + open + 2} ${100 - w} ${y}Z`;
    this.svg.querySelector('.mouth').setAttribute('d', d);
  }
}
