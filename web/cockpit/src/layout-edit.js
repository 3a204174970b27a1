// Layout edits for the operator's own layouts (layout-owner.js): each a pure function of the
// manifest's layout tree (rows and columns with shares). Loaded with the layout editor.

const MIN_SHARE = 0.1;

const isLeaf = (n) => typeof n === 'string';
const kids = (n) => n.row ?? n.col;
const withKids = (n, items, shares) => (n.row ? { row: items, shares } : { col: items, shares });
const sharesOf = (n) => n.shares ?? kids(n).map(() => 1);

/** The tree without panel `id`; a container left with one child becomes that child. */
export function removePanel(node, id) {
  if (node === null) return null; // a manifest may place nothing on the main tab
  if (isLeaf(node)) return node === id ? null : node;
  const items = [];
  const shares = [];
  kids(node).forEach((k, i) => {
    const r = removePanel(k, id);
    if (r !== null) {
      items.push(r);
      shares.push(sharesOf(node)[i]);
    }
  });
  if (!items.length) return null;
  if (items.length === 1) return items[0];
  return withKids(node, items, shares);
}

/** The tree with panels `a` and `b` in each other's places. */
export function swapPanels(node, a, b) {
  if (node === null) return null;
  if (isLeaf(node)) return node === a ? b : node === b ? a : node;
  return withKids(
    node,
    kids(node).map((k) => swapPanels(k, a, b)),
    node.shares,
  );
}

/** The tree with panel `id` added at the end of the top row (or beside everything). */
export function addPanel(node, id) {
  if (node === null) return id;
  if (!isLeaf(node) && node.row) {
    const shares = sharesOf(node);
    const mean = shares.reduce((a, b) => a + b, 0) / shares.length;
    return { row: [...node.row, id], shares: [...shares, mean] };
  }
  return { row: [node, id], shares: [3, 1] };
}

/** The tree with the container at `path` (child indexes from the root) given these shares. */
export function setShares(node, path, shares) {
  if (!path.length)
    return withKids(
      node,
      kids(node),
      shares.map((s) => Math.max(MIN_SHARE, +s.toFixed(3))),
    );
  const [i, ...rest] = path;
  return withKids(
    node,
    kids(node).map((k, j) => (j === i ? setShares(k, rest, shares) : k)),
    node.shares,
  );
}

/** A panel for a channel added from the channel list, by what its encoding shows best. */
export function panelForChannel(channel, kindOf, taken) {
  const k = kindOf(channel.encoding);
  const kind =
    k === 'jpeg'
      ? 'video'
      : k === 'costmap'
        ? 'map2d'
        : k === 'voxels'
          ? 'map3d'
          : channel.encoding === 'stats.json.v1'
            ? 'stats'
            : k === 'json' && channel.delivery === 'reliable'
              ? 'event-log'
              : k === 'json' || k === 'pose'
                ? 'plot'
                : null;
  if (!kind || channel.dir === 'tx') return null;
  let n = 1;
  while (taken.has(`${channel.ch}-${n}`)) n++;
  return { id: `${channel.ch}-${n}`, kind, title: channel.ch, channels: [channel.ch] };
}
