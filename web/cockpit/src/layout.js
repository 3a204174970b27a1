// Lays out a manifest's panels (cockpit-wire-protocol.md § Manifest): the layout tree of rows and
// columns with optional shares, and pages as extra tabs. The manifest arrives already validated
// and normalised by the wire core, so every id here is known to exist.

/**
 * Builds the DOM for a layout node; `mount(panelId)` returns the element for a panel. A null layout
 * (nothing left to place) is an empty row. While the layout is edited, `gap(path, i, box,
 * horizontal)` makes the handle between cells i and i + 1 of the container at `path` (child indexes
 * from the root).
 */
export function renderLayout(node, mount, gap = null, path = []) {
  if (node === null) node = { row: [] };
  if (typeof node === 'string') return mount(node);
  const horizontal = Array.isArray(node.row);
  const items = horizontal ? node.row : node.col;
  const box = document.createElement('div');
  box.className = horizontal ? 'layout-row' : 'layout-col';
  items.forEach((child, i) => {
    if (gap && i > 0) box.append(gap(path, i - 1, box, horizontal));
    const cell = document.createElement('div');
    cell.className = 'layout-cell';
    cell.style.flex = `${node.shares ? node.shares[i] : 1} 1 0`;
    cell.append(renderLayout(child, mount, gap, [...path, i]));
    box.append(cell);
  });
  return box;
}

/** Tabs: "Main" shows the layout; each page shows one panel on its own. */
export function tabsFor(manifest) {
  return [
    { id: '__main', title: 'Main' },
    ...manifest.pages.map((id) => ({ id, title: titleOf(manifest, id) })),
  ];
}

function titleOf(manifest, id) {
  return manifest.panels.find((p) => p.id === id)?.title || id;
}

/** The panel ids a tab shows. */
export function panelsOnTab(manifest, tabId) {
  if (tabId !== '__main') return [tabId];
  const ids = [];
  const walk = (n) => (typeof n === 'string' ? ids.push(n) : (n.row ?? n.col).forEach(walk));
  if (manifest.layout !== null) walk(manifest.layout);
  return ids;
}
