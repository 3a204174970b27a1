// A small progress view for swarm transfers in a page: one bar per file and one row per peer
// (bytes received from it, bytes served to it). Feed it the glue's onProgress reports.

const fmt = (n) =>
  n >= 1 << 20
    ? `${(n / (1 << 20)).toFixed(1)} MiB`
    : n >= 1024
      ? `${(n / 1024).toFixed(0)} KiB`
      : `${n} B`;

/** @param {HTMLElement} container */
export function createProgressView(container) {
  const files = new Map();
  const doc = container.ownerDocument;
  const el = (tag, cls, text) => {
    const e = doc.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };
  return {
    update(p) {
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
    },
  };
}
