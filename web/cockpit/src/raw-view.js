// The raw message inspector for any channel from the channel list: the last MAX_MESSAGES
// messages, each with its header (seq, ts, size) and the payload as the decode core reads it
// (the JSON value, an image's size, a costmap's meta) in a collapsible tree; the channel's rate
// and span loss (channel-stats.js); copying one message, or all kept, as JSON. Pausing freezes
// the list while the counters go on.
import { ChannelStats } from './channel-stats.js';
import { payloadTree } from './payload-tree.js';

export const MAX_MESSAGES = 50;
const PREVIEW_BYTES = 64;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** What an inspector shows of a decoded frame; a copy, never a view of WASM memory. */
function decodedValue(dec, result, payload) {
  if (!result.ok) return { decodeError: result.error.code, message: result.error.message };
  const v = dec.value;
  switch (dec.kind) {
    case 'pose':
    case 'json':
      return v;
    case 'jpeg':
      return { image: 'jpeg', w: v.meta.w, h: v.meta.h };
    case 'costmap':
      return { costmap: { ...v.meta }, cells: v.cells.length };
    case 'voxels':
      return { voxels: v.positions.length / 3 };
    default: {
      const head = payload.subarray(0, PREVIEW_BYTES);
      let text = null;
      try {
        text = utf8.decode(head);
      } catch {}
      return text !== null
        ? { text, truncated: payload.length > PREVIEW_BYTES }
        : {
            hex: Array.from(head, (b) => b.toString(16).padStart(2, '0')).join(' '),
            truncated: payload.length > PREVIEW_BYTES,
          };
    }
  }
}

const clock = (ts) => (ts ? new Date(ts * 1000).toISOString().slice(11, 23) : '–');

export class RawView {
  #messages = []; // newest last: {seq, ts, delivery, size, meta?, payload}
  #stats = new ChannelStats();
  #dec;
  #list = document.createElement('ol');
  #rate = document.createElement('p');
  #paused = false;

  /** @param {{ch: string, encoding: string}} channel @param {{decode: object, onClose: () => void}} options */
  constructor(channel, { decode, onClose }) {
    this.channel = channel;
    this.#dec = new decode.ChannelDecoder(channel.encoding);
    this.el = document.createElement('section');
    this.el.className = 'raw-view';
    this.el.dataset.channel = channel.ch;
    this.el.setAttribute('aria-label', `raw: ${channel.ch}`);
    const head = document.createElement('header');
    const title = document.createElement('h3');
    title.textContent = `raw: ${channel.ch} (${channel.encoding})`;
    const pause = button('Pause', () => {
      this.#paused = !this.#paused;
      pause.textContent = this.#paused ? 'Resume' : 'Pause';
      pause.setAttribute('aria-pressed', String(this.#paused));
    });
    const copyAll = button('Copy all', () => copy(this.#messages));
    const close = button('Close', () => {
      this.destroy();
      onClose();
    });
    head.append(title, pause, copyAll, close);
    this.#rate.className = 'raw-rate';
    this.#rate.textContent = 'waiting for a message…';
    this.#list.className = 'raw-list';
    this.el.append(head, this.#rate, this.#list);
  }

  onFrame(frame) {
    const h = frame.header;
    this.#stats.record(h.seq, performance.now());
    const result = this.#dec.decode(h.meta, frame.payload);
    const m = { seq: h.seq, ts: h.ts, delivery: h.delivery, size: frame.payload.length };
    if (h.meta) m.meta = h.meta;
    m.payload = decodedValue(this.#dec, result, frame.payload);
    this.#messages.push(m);
    if (this.#messages.length > MAX_MESSAGES) this.#messages.shift();
    this.el.dataset.newestSeq = String(h.seq);
    if (this.#paused) return;
    this.#list.prepend(this.#row(m));
    while (this.#list.childElementCount > MAX_MESSAGES) this.#list.lastElementChild.remove();
  }

  onTick(now) {
    const s = this.#stats.snapshot(now);
    this.#rate.textContent = `${s.rateHz.toFixed(1)} Hz · ${s.lost} lost (${s.lossPct.toFixed(1)}%) · ${this.#dec.errors} decode errors`;
    this.el.dataset.rateHz = s.rateHz.toFixed(2);
    this.el.dataset.lost = String(s.lost);
  }

  #row(m) {
    const li = document.createElement('li');
    li.dataset.seq = String(m.seq);
    li.dataset.size = String(m.size);
    const d = document.createElement('details');
    const s = document.createElement('summary');
    s.textContent = `#${m.seq} · ${clock(m.ts)} · ${m.size} B${m.payload.decodeError ? ` · ${m.payload.decodeError}` : ''}`;
    d.append(s);
    d.addEventListener(
      'toggle',
      () =>
        d.append(
          button('Copy JSON', () => copy(m)),
          payloadTree(m, 2),
        ),
      { once: true },
    );
    li.append(d);
    return li;
  }

  destroy() {
    this.#dec.close();
    this.el.remove();
  }
}

function button(label, onClick) {
  const b = document.createElement('button');
  b.type = 'button';
  b.textContent = label;
  b.addEventListener('click', onClick);
  return b;
}

function copy(value) {
  navigator.clipboard
    .writeText(JSON.stringify(value, null, 2))
    .catch((e) => console.warn(`copy failed: ${e.message}`));
}
