// A panel kind whose code loads when a manifest first shows one, so the first paint never waits
// for it (bench/README.md § Module size). Until the real panel has loaded, the stand-in holds the
// panel's place in the layout and keeps the latest frame of each channel, which the real panel
// then renders: it shows the newest state, as it would after any frame.
import { Panel } from './panel.js';

/**
 * @param {() => Promise<new (ctx: object) => object>} load resolves with the real panel class
 * @param {string} what the panel's name in an error, e.g. "the 3D map"
 */
export function lazyPanel(load, what) {
  return class LazyPanel {
    #real = null;
    #held = new Map(); // channel -> the latest frame, its payload copied (frames are views)
    #gone = false;
    #channels;

    constructor(ctx) {
      this.ctx = ctx;
      this.spec = ctx.panel;
      this.#channels = ctx.panel.channels.map((id) =>
        ctx.manifest.channels.find((c) => c.ch === id),
      );
      this.el = document.createElement('section');
      this.el.className = `panel panel-${this.spec.kind}`;
      this.el.dataset.panelId = this.spec.id;
      this.el.setAttribute('aria-label', this.spec.title);
      this.el.setAttribute('aria-busy', 'true');
      const loaded = load().then((Real) => {
        if (this.#gone) return;
        const real = new Real(ctx);
        this.el.replaceWith(real.el);
        this.el = real.el;
        this.#real = real;
        ctx.mounted?.(real.el); // the layout editor's controls, on the element now shown
        for (const frame of this.#held.values()) real.onFrame(frame);
        this.#held.clear();
      });
      loaded.catch((e) => {
        this.el.textContent = `${what} could not load: ${e?.message ?? e}; reload the page`;
        this.el.removeAttribute('aria-busy');
      });
    }

    get channels() {
      return this.#real ? this.#real.channels : this.#channels;
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
  };
}
