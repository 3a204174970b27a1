// A panel kind this cockpit does not know: it still renders, naming the kind and showing each
// channel's rate, so a robot ahead of the cockpit is visible rather than silently missing.
import { Panel } from './panel.js';

export class UnknownPanel extends Panel {
  #rows = document.createElement('ul');

  constructor(ctx) {
    super(ctx);
    const note = document.createElement('p');
    note.className = 'hint';
    note.textContent = `Unknown panel kind "${this.spec.kind}"`;
    this.#rows.className = 'rate-list';
    this.body.append(note, this.#rows);
    this.el.dataset.unknownKind = this.spec.kind;
  }

  onTick(now) {
    this.#rows.replaceChildren(
      ...this.channels.map((c) => {
        const li = document.createElement('li');
        const s = this.stats.get(c.ch).snapshot(now);
        li.textContent = `${c.ch} (${c.encoding}): ${s.rateHz.toFixed(1)} Hz`;
        return li;
      }),
    );
  }
}
