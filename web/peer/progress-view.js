// A small progress view for swarm transfers in a page: one bar per file and one row per peer
// (bytes received from it, bytes served to it). Feed it the glue's onProgress reports.
//
// Reports arrive up to ten times a second per file, and every redraw is DOM work on the page's
// main thread plus a frame for the compositor: 5.6% of a downloader's main thread in the peer
// bench, where the raw lane draws nothing (bench/README.md § Swarm 1 -> 1). So the view keeps the
// newest report of each file and draws it at most every `intervalMs`; a report whose state differs
// from the one shown (a new file, downloading -> complete) is drawn at once, so the final figure
// is exact the moment it is reported.

// 4 Hz: a bar still moves smoothly enough to read; a display rate, not protocol.
const DEFAULT_INTERVAL_MS = 250;

const fmt = (n) =>
  n >= 1 << 20
    ? `${(n / (1 << 20)).toFixed(1)} MiB`
    : n >= 1024
      ? `${(n / 1024).toFixed(0)} KiB`
      : `${n} B`;

/**
 * @param {HTMLElement} container
 * @param {{intervalMs?: number}} [options]
 */
export function createProgressView(container, { intervalMs = DEFAULT_INTERVAL_MS } = {}) {
  const files = new Map();
  const waiting = new Map(); // fileId -> the newest report not drawn yet
  /** @type {ReturnType<typeof setTimeout> | null} */
  let timer = null;
  const doc = container.ownerDocument;
  const el = (tag, cls, text) => {
    const e = doc.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };

  function draw(p) {
    let f = files.get(p.fileId);
    if (!f) {
      const box = el('section', 'tether-transfer');
      box.dataset.fileId = p.fileId;
      const title = el('div', 'tether-transfer-title');
      const bar = el('progress', 'tether-transfer-bar');
      const peers = el('table', 'tether-transfer-peers');
      box.append(title, bar, peers);
      container.append(box);
      f = { box, title, bar, peers, rows: new Map() };
      files.set(p.fileId, f);
    }
    f.bar.max = p.total || 1;
    f.bar.value = p.have;
    f.box.dataset.state = p.state;
    f.title.textContent = `${p.name}: ${fmt(p.bytes)} of ${fmt(p.size)} (${p.have}/${p.total} chunks${p.resumed ? `, ${p.resumed} resumed` : ''}) ${p.state}`;
    for (const [peer, v] of Object.entries(p.peers)) {
      let row = f.rows.get(peer);
      if (!row) {
        row = el('tr');
        row.dataset.peer = peer;
        const name = el('td', null, peer);
        const bar = el('progress');
        const cell = el('td');
        cell.append(bar);
        const text = el('td');
        row.append(name, cell, text);
        f.peers.append(row);
        row.bar = bar;
        row.text = text;
        f.rows.set(peer, row);
      }
      row.bar.max = p.size || 1;
      row.bar.value = Math.min(p.size, v.received);
      row.text.textContent = `received ${fmt(v.received)}, served ${fmt(v.served)}`;
    }
  }

  function flush() {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    const all = [...waiting.values()];
    waiting.clear();
    for (const p of all) draw(p);
  }

  return {
    update(p) {
      waiting.set(p.fileId, p);
      if (files.get(p.fileId)?.box.dataset.state !== p.state) {
        // Drawn at once: only this file, the others keep their turn.
        waiting.delete(p.fileId);
        draw(p);
        return;
      }
      if (timer === null) timer = setTimeout(flush, intervalMs);
    },
    /** Draws every report not drawn yet, now. */
    flush,
  };
}
