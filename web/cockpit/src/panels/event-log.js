// event-log: a reliable JSON log channel as a list an operator can filter by level (at least
// warn, say) and by text. The newest MAX_ENTRIES stay; filtering re-renders from them, and a
// frame adds one row, so a busy log costs one row per message.
import { Panel } from './panel.js';
import { LEVELS, logEntry } from './log-entry.js';

export const MAX_ENTRIES = 1000;

export class EventLogPanel extends Panel {
  #entries = []; // {n, level, text, ts, source}
  #list = document.createElement('ol');
  #level = document.createElement('select');
  #text = document.createElement('input');
  #count = document.createElement('span');
  #ts = 0;
  #n = 0;

  constructor(ctx) {
    super(ctx);
    const bar = document.createElement('div');
    bar.className = 'log-filters';
    this.#level.setAttribute('aria-label', 'Lowest level shown');
    this.#level.append(
      ...LEVELS.map((l) =>
        Object.assign(document.createElement('option'), { value: l, textContent: `${l}+` }),
      ),
    );
    this.#text.type = 'search';
    this.#text.placeholder = 'Filter text';
    this.#text.setAttribute('aria-label', 'Filter log text');
    this.#count.className = 'hint';
    bar.append(this.#level, this.#text, this.#count);
    this.#list.className = 'log-list';
    this.#list.setAttribute('aria-live', 'polite');
    this.body.append(bar, this.#list);
    this.#level.addEventListener('change', () => this.#rerender());
    this.#text.addEventListener('input', () => this.#rerender());
    this.#rerender();
  }

  onFrame(frame) {
    this.#ts = frame.header.ts;
    super.onFrame(frame);
  }

  render(ch, dec) {
    const entry = { n: this.#n++, ch, ...logEntry(dec.value, this.#ts) };
    this.#entries.push(entry);
    if (this.#entries.length > MAX_ENTRIES) this.#entries.shift();
    if (this.#passes(entry)) {
      this.#list.append(this.#row(entry));
      while (this.#list.childElementCount > MAX_ENTRIES) this.#list.firstElementChild.remove();
      this.#list.lastElementChild.scrollIntoView?.({ block: 'nearest' });
    }
    this.#updateCount();
  }

  #passes(e) {
    if (LEVELS.indexOf(e.level) < LEVELS.indexOf(this.#level.value)) return false;
    const q = this.#text.value.trim().toLowerCase();
    return !q || e.text.toLowerCase().includes(q) || e.source.toLowerCase().includes(q);
  }

  #row(e) {
    const li = document.createElement('li');
    li.dataset.level = e.level;
    li.dataset.n = String(e.n);
    const time = document.createElement('time');
    time.textContent = e.ts ? new Date(e.ts * 1000).toISOString().slice(11, 23) : '';
    const level = document.createElement('span');
    level.className = 'log-level';
    level.textContent = e.level;
    const text = document.createElement('span');
    text.className = 'log-text';
    text.textContent = (e.source ? `[${e.source}] ` : '') + e.text;
    li.append(time, level, text);
    if (this.channels.length > 1) li.title = e.ch;
    return li;
  }

  #rerender() {
    this.#list.replaceChildren(
      ...this.#entries.filter((e) => this.#passes(e)).map((e) => this.#row(e)),
    );
    this.#updateCount();
  }

  #updateCount() {
    const shown = this.#list.childElementCount;
    this.#count.textContent = `${shown} of ${this.#entries.length}`;
    this.el.dataset.shown = String(shown);
    this.el.dataset.total = String(this.#entries.length);
  }
}
