// The layout controls: Edit (remove a panel, drag one onto another to swap them, drag the gap
// between two to resize, add one from the channel list), Share (the link with #layout=…) and
// Reset (the manifest's layout). The custom layout is kept per robot in localStorage; a link's
// layout wins over the saved one and becomes the saved one.
import {
  addPanel,
  applyCustom,
  decodeShared,
  encodeShared,
  loadSaved,
  panelForChannel,
  removePanel,
  save,
  setShares,
  swapPanels,
} from './layout-edit.js';

export class LayoutOwner {
  editing = false;
  #linked = null; // the custom layout from the link, until applied
  #current = null; // {robotId, custom}
  #note = '';

  /** @param {{validate: (m: object) => object, kindOf: (e: string) => string, rerender: () => void}} o */
  constructor({ validate, kindOf, rerender }) {
    this.validate = validate;
    this.kindOf = kindOf;
    this.rerender = rerender;
    const m = location.hash.match(/(?:^#|&)layout=([^&]*)/);
    if (m) {
      const r = decodeShared(m[1]);
      if (r.ok) this.#linked = r.custom;
      else this.#note = r.error;
    }
  }

  get note() {
    return this.#note;
  }

  /** The manifest to show for `robotId`: the custom layout applied, or the manifest's own. */
  effective(manifest, robotId) {
    if (this.#linked) {
      save(robotId, this.#linked);
      this.#linked = null;
    }
    const custom = loadSaved(robotId);
    this.#current = { robotId, manifest, custom };
    if (!custom) return manifest;
    const r = applyCustom(manifest, custom, this.validate);
    if (r.ok) return r.manifest;
    this.#note = `your saved layout no longer fits this robot (${r.error}); showing its own layout`;
    return manifest;
  }

  #custom() {
    const { manifest, custom } = this.#current;
    return custom ?? { layout: manifest.layout, added: [] };
  }

  #commit(custom) {
    save(this.#current.robotId, custom);
    this.#note = '';
    this.rerender();
  }

  remove(id) {
    const c = this.#custom();
    const layout = removePanel(c.layout, id);
    if (layout === null) return; // the last panel stays
    this.#commit({ ...c, layout, added: c.added.filter((p) => p.id !== id) });
  }

  swap(a, b) {
    if (a === b) return;
    const c = this.#custom();
    this.#commit({ ...c, layout: swapPanels(c.layout, a, b) });
  }

  resize(path, shares) {
    const c = this.#custom();
    this.#commit({ ...c, layout: setShares(c.layout, path, shares) });
  }

  add(channel) {
    const c = this.#custom();
    const taken = new Set([...this.#current.manifest.panels, ...c.added].map((p) => p.id));
    const spec = panelForChannel(channel, this.kindOf, taken);
    if (!spec) return;
    this.#commit({ layout: addPanel(c.layout, spec.id), added: [...c.added, spec] });
  }

  reset() {
    this.#commit(null);
  }

  /** The link that opens this layout for anyone. */
  shareUrl() {
    const url = new URL(location.href);
    url.hash = `layout=${encodeShared(this.#custom())}`;
    return url.href;
  }

  /** Edit controls on a mounted panel: remove, and drag by its head to swap. */
  decorate(el, id) {
    const head = el.querySelector('.panel-head');
    if (!head) return;
    head.draggable = true;
    head.classList.add('panel-draggable');
    head.addEventListener('dragstart', (e) => e.dataTransfer.setData('text/x-tether-panel', id));
    el.addEventListener('dragover', (e) => e.preventDefault());
    el.addEventListener('drop', (e) => {
      e.preventDefault();
      const from = e.dataTransfer.getData('text/x-tether-panel');
      if (from) this.swap(from, id);
    });
    const x = Object.assign(document.createElement('button'), { type: 'button', textContent: '✕' });
    x.className = 'panel-remove';
    x.setAttribute('aria-label', `remove ${el.getAttribute('aria-label') ?? id}`);
    x.addEventListener('click', () => this.remove(id));
    head.append(x);
  }

  /** A gap between two cells of the container at `path` that resizes them by dragging. */
  resizer(path, index, box, horizontal) {
    const gap = document.createElement('div');
    gap.className = `layout-resizer ${horizontal ? 'layout-resizer-x' : 'layout-resizer-y'}`;
    gap.setAttribute('role', 'separator');
    gap.addEventListener('pointerdown', (down) => {
      down.preventDefault();
      gap.setPointerCapture(down.pointerId);
      const cells = [...box.children].filter((c) => c.classList.contains('layout-cell'));
      const sizes = cells.map((c) =>
        horizontal ? c.getBoundingClientRect().width : c.getBoundingClientRect().height,
      );
      const start = horizontal ? down.clientX : down.clientY;
      const pair = sizes[index] + sizes[index + 1];
      let shares = null;
      const move = (e) => {
        const d = (horizontal ? e.clientX : e.clientY) - start;
        const a = Math.min(pair * 0.95, Math.max(pair * 0.05, sizes[index] + d));
        const next = sizes.slice();
        next[index] = a;
        next[index + 1] = pair - a;
        shares = next.map((s) => s / Math.min(...next));
        cells.forEach((c, i) => (c.style.flex = `${shares[i]} 1 0`));
      };
      const up = () => {
        gap.removeEventListener('pointermove', move);
        gap.removeEventListener('pointerup', up);
        if (shares) this.resize(path, shares);
      };
      gap.addEventListener('pointermove', move);
      gap.addEventListener('pointerup', up);
    });
    return gap;
  }
}
