// stats: a stats.json.v1 object as a definition list, nested keys flattened with dots.
import { Panel } from './panel.js';

function flatten(value, prefix, out) {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) flatten(v, prefix ? `${prefix}.${k}` : k, out);
  } else {
    out.push([prefix, typeof value === 'number' ? +value.toFixed(3) : JSON.stringify(value)]);
  }
  return out;
}

export class StatsPanel extends Panel {
  #list = document.createElement('dl');

  constructor(ctx) {
    super(ctx);
    this.#list.className = 'stats-list';
    this.body.append(this.#list);
  }

  render(ch, dec) {
    const rows = flatten(dec.value, '', []);
    this.#list.replaceChildren(
      ...rows.flatMap(([k, v]) => {
        const dt = document.createElement('dt');
        dt.textContent = k;
        const dd = document.createElement('dd');
        dd.textContent = String(v);
        return [dt, dd];
      }),
    );
  }
}
