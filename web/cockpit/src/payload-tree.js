// A JSON value as a collapsible tree: objects and arrays are <details> (the first `openDepth`
// levels open), leaves are "key: value" rows. Built on demand, so a closed message costs nothing.

/** @param {unknown} value @param {number} [openDepth] @returns {HTMLElement} */
export function payloadTree(value, openDepth = 1) {
  const root = document.createElement('div');
  root.className = 'tree';
  root.append(node(null, value, 0, openDepth));
  return root;
}

function node(key, value, depth, openDepth) {
  if (value && typeof value === 'object') {
    const entries = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
    const d = document.createElement('details');
    d.open = depth < openDepth;
    const s = document.createElement('summary');
    s.textContent = `${key === null ? '' : `${key}: `}${Array.isArray(value) ? `[${entries.length}]` : `{${entries.length}}`}`;
    d.append(s);
    // Children are built the first time the node opens.
    const fill = () => {
      if (d.childElementCount > 1) return;
      const ul = document.createElement('ul');
      for (const [k, v] of entries) {
        const li = document.createElement('li');
        li.append(node(k, v, depth + 1, openDepth));
        ul.append(li);
      }
      d.append(ul);
    };
    if (d.open) fill();
    else d.addEventListener('toggle', fill, { once: true });
    return d;
  }
  const leaf = document.createElement('span');
  leaf.className = 'tree-leaf';
  const k = document.createElement('span');
  k.className = 'tree-key';
  k.textContent = key === null ? '' : `${key}: `;
  const v = document.createElement('span');
  v.className = `tree-${value === null ? 'null' : typeof value}`;
  v.textContent = typeof value === 'string' ? JSON.stringify(value) : String(value);
  leaf.append(k, v);
  return leaf;
}
