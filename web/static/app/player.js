// player.js — plays the voice's segments in order through Web Audio: the
// daemon fetched the audio (GPT-SoVITS sends no CORS headers), the page
// fetches it from the daemon, decodes it and plays it through an analyser
// whose loudness drives the avatar's mouth. What was played is recorded in
// window.cyanPlayed.

export class Player {
  /**
   * @param {{onStart(sp): void, onEnd(sp): void, onLevel(level: number): void, onError(sp, msg): void, fetch(url): Promise<Response>, voice?(): string, synthesize?(sp, voice): Promise<Response>}} hooks
   * voice, when it gives a name, is the voice the person chose in the
   * settings: each segment is then voiced again with it (synthesize)
   * instead of fetching the daemon's audio.
   */
  constructor(hooks) {
    this.hooks = hooks;
    this.queue = [];
    this.busy = false;
    this.volume = 0.8;
    this.muted = false;
    this.played = [];
    window.cyanPlayed = this.played;
    this.ctx = null;
    // Turns whose speech was interrupted: their later segments are dropped.
    this.stale = new Set();
    this.current = null; // {sp, stop()} of the segment playing
    // Every speech event heard, for tests: {seq, turn, text}.
    this.heard = [];
    window.cyanHeard = this.heard;
  }

  #audio() {
    if (!this.ctx) {
      this.ctx = new AudioContext();
      this.gain = this.ctx.createGain();
      this.analyser = this.ctx.createAnalyser();
      this.analyser.fftSize = 1024;
      this.analyser.connect(this.gain);
      this.gain.connect(this.ctx.destination);
      this.#applyVolume();
    }
    return this.ctx;
  }

  /** Whether the browser holds sound back until the person interacts. */
  get suspended() { return this.ctx?.state === 'suspended'; }

  /** Resumes sound after a click or key press (browsers' autoplay rule). */
  unlock() { if (this.ctx?.state === 'suspended') this.ctx.resume(); }

  setVolume(v) { this.volume = v; this.#applyVolume(); }
  setMuted(m) { this.muted = m; this.#applyVolume(); }
  #applyVolume() { if (this.gain) this.gain.gain.value = this.muted ? 0 : this.volume; }

  /** Queues a speech event; segments play in seq order. */
  add(sp) {
    this.heard.push({ seq: sp.seq, turn: sp.turn || '', text: sp.text });
    if (sp.turn && this.stale.has(sp.turn)) return;
    this.queue.push(sp);
    this.queue.sort((a, b) => a.seq - b.seq);
    this.#next();
  }

  /** Whether anything is playing or waiting to. */
  get active() { return this.busy || this.queue.length > 0; }

  /**
   * Stops the voice: what plays stops, what waits is dropped, and the
   * turns they belong to stay silent (a new message interrupts the old
   * reply's speech). turns are more turns to keep silent, whose speech
   * has not come yet.
   */
  interrupt(...turns) {
    // Speech of no turn (a greeting, what the companion says on its own)
    // is dropped where it waits, but what comes later still speaks.
    const mark = (t) => { if (t) this.stale.add(t); };
    turns.forEach(mark);
    for (const sp of this.queue) mark(sp.turn);
    for (const p of this.played) mark(p.turn);
    if (this.current) { mark(this.current.sp.turn); this.current.stop(); }
    this.queue.length = 0;
  }

  async #next() {
    if (this.busy || this.queue.length === 0) return;
    this.busy = true;
    const sp = this.queue.shift();
    try {
      if (sp.error || (!sp.audio && !this.hooks.voice?.())) {
        this.hooks.onError(sp, sp.error || 'no audio');
        this.hooks.onStart(sp);
        await new Promise((r) => {
          const t = setTimeout(r, Math.min(6000, 400 + 120 * [...sp.text].length));
          this.current = { sp, stop: () => { clearTimeout(t); r(); } };
        });
        this.current = null;
      } else {
        await this.#play(sp);
      }
    } catch (e) {
      this.hooks.onError(sp, String(e?.message || e));
    } finally {
      this.current = null;
      this.hooks.onLevel(0);
      this.hooks.onEnd(sp);
      this.busy = false;
      this.#next();
    }
  }

  async #play(sp) {
    const ctx = this.#audio();
    const voice = this.hooks.voice?.() || '';
    // Until it sounds, an interrupt cancels it where it is: a segment
    // still being fetched or decoded when a new message comes stays silent.
    let cancelled = false;
    this.current = { sp, stop: () => { cancelled = true; } };
    const gone = () => {
      if (cancelled) this.current = null;
      return cancelled;
    };
    const resp = voice ? await this.hooks.synthesize(sp, voice) : await this.hooks.fetch(sp.audio);
    if (gone()) return;
    if (!resp.ok) throw new Error(`the audio is gone (${resp.status})`);
    const bytes = await resp.arrayBuffer();
    const size = bytes.byteLength;
    const buffer = await ctx.decodeAudioData(bytes);
    if (gone()) return;
    const src = ctx.createBufferSource();
    src.buffer = buffer;
    src.connect(this.analyser);
    const rec = {
      seq: sp.seq, turn: sp.turn, text: sp.text, emotion: sp.emotion, language: sp.language,
      audio: sp.audio, type: sp.type, voice, bytes: size, duration: buffer.duration, peak: 0, started: Date.now(),
    };
    this.played.push(rec);
    this.hooks.onStart(sp);
    const data = new Float32Array(this.analyser.fftSize);
    let raf = 0;
    const tick = () => {
      this.analyser.getFloatTimeDomainData(data);
      let sum = 0;
      for (const x of data) sum += x * x;
      const rms = Math.sqrt(sum / data.length);
      rec.peak = Math.max(rec.peak, rms);
      this.hooks.onLevel(Math.min(1, rms * 4));
      raf = requestAnimationFrame(tick);
    };
    await new Promise((resolve) => {
      src.onended = resolve;
      this.current = { sp, stop: () => { rec.interrupted = true; try { src.stop(); } catch { /* not started */ } resolve(); } };
      src.start();
      raf = requestAnimationFrame(tick);
      // A context that never runs (no audio device) must not stall the queue.
      setTimeout(resolve, buffer.duration * 1000 + 3000);
    });
    this.current = null;
    cancelAnimationFrame(raf);
    rec.ended = Date.now();
  }
}
