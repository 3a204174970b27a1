// map3d, loaded when a manifest first shows one: three.js is most of the cockpit's JavaScript and
// the first paint never needs it (bench/README.md § Module size). Until the real panel
// (map3d.js) has loaded, this stand-in holds the panel's place in the layout and keeps the latest
// frame of each channel, which the real panel then renders: the map shows the newest state, as
// it would after any frame.
import { Panel } from './panel.js';

export class Map3dPanel {
  #real = null;
  #held = new Map(); // channel -> the latest frame, its payload copied (frames are views)
  #gone = false;

  constructor(ctx) {
    this.ctx = ctx;
    this.spec = ctx.panel;
    this.channels = ctx.panel.channels.map((id) => ctx.manifest.channels.find((c) => c.ch === id));
    this.el = document.createElement('section');
    this.el.className = `panel panel-${this.spec.kind}`;
    this.el.dataset.panelId = this.spec.id;
    this.el.setAttribute('aria-label', this.spec.title);
    this.el.setAttribute('aria-busy', 'true');
    const loaded = import('./map3d.js').then(({ Map3dPanel: Real }) => {
      if (this.#gone) return;
      const real = new Real(ctx);
      this.el.replaceWith(real.el);
      this.el = real.el;
      this.#real = real;
      for (const frame of this.#held.values()) real.onFrame(frame);
      this.#held.clear();
    });
    loaded.catch((e) => {
      this.el.textContent = `the 3D map could not load: ${e?.message ?? e}; reload the page`;
      this.el.removeAttribute('aria-busy');
    });
  }

  wantedChannels() {
    return this.#real ? this.#real.wantedChannels() : Panel.prototype.wantedChannels.call(this);
  }

  onFrame(frame) {
    if (this.#real) return this.#real.onFrame(frame);
    this.#held.set(frame.header.ch, { ...frame, payload: frame.payload.slice() });
  }

  decodeErrors() {
    return this.#real ? this.#real.decodeErrors() : 0;
  }

  onTick(now) {
    this.#real?.onTick(now);
  }

  destroy() {
    this.#gone = true;
    if (this.#real) this.#real.destroy();
    else this.el.remove();
  }
}
