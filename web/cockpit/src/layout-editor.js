// Editing the operator's layout (layout-owner.js keeps and applies it): remove a panel, drag one
// by its title onto another to swap them, drag the gap between two cells to resize them, add one
// from the channel list. Loaded when Edit is first pressed.
import { addPanel, panelForChannel, removePanel, setShares, swapPanels } from './layout-edit.js';

export class LayoutEditor {
  constructor(owner) {
    this.owner = owner;
  }

  remove(id) {
    const c = this.owner.custom();
    const layout = removePanel(c.layout, id);
    if (layout === null) return; // the last panel stays
    this.owner.commit({ ...c, layout, added: c.added.filter((p) => p.id !== id) });
  }

  swap(a, b) {
    if (a === b) return;
    const c = this.owner.custom();
    this.owner.commit({ ...c, layout: swapPanels(c.layout, a, b) });
  }

  resize(path, shares) {
    const c = this.owner.custom();
    this.owner.commit({ ...c, layout: setShares(c.layout, path, shares) });
  }

  add(channel) {
    const c = this.owner.custom();
    const taken = new Set([...this.owner.current.manifest.panels, ...c.added].map((p) => p.id));
    const spec = panelForChannel(channel, this.owner.kindOf, taken);
    if (!spec) return;
    this.owner.commit({ layout: addPanel(c.layout, spec.id), added: [...c.added, spec] });
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
