// Layouts people own: the manifest's layout tree (rows and columns with shares) edited in place,
// saved per robot in the browser and shared in the link (#layout=…). An edit is a pure function
// of the tree; what is applied is checked by the wire core like any manifest, so a saved layout
// that no longer fits the robot's manifest falls back to the manifest's own, with a note.

export const MAX_SHARED_CHARS = 8192; // a link longer than this is refused, not truncated
const STORAGE = 'tether.layout.';
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

/** A layout as the link carries it: base64url of its JSON. */
export function encodeShared(custom) {
  const bytes = new TextEncoder().encode(JSON.stringify(custom));
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** @returns {{ok: true, custom: object} | {ok: false, error: string}} */
export function decodeShared(text) {
  if (text.length > MAX_SHARED_CHARS)
    return {
      ok: false,
      error: `the shared layout is ${text.length} characters, over ${MAX_SHARED_CHARS}; share a smaller one`,
    };
  try {
    const s = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
    const custom = JSON.parse(
      new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(s, (c) => c.charCodeAt(0))),
    );
    if (!custom || typeof custom !== 'object' || !('layout' in custom))
      return { ok: false, error: 'the shared layout has no layout in it; ask for the link again' };
    return { ok: true, custom };
  } catch {
    return {
      ok: false,
      error: 'the shared layout is not readable (a cut-off link?); ask for the link again',
    };
  }
}

export const loadSaved = (robotId) => {
  try {
    return JSON.parse(localStorage.getItem(STORAGE + robotId) ?? 'null');
  } catch {
    return null;
  }
};
export const save = (robotId, custom) =>
  custom
    ? localStorage.setItem(STORAGE + robotId, JSON.stringify(custom))
    : localStorage.removeItem(STORAGE + robotId);

/**
 * The manifest with a custom layout applied: the robot's channels, its panels plus the added
 * ones, the custom tree. Checked by the wire core; an invalid result returns the reason.
 * @param {{layout: object|string, added?: object[]}} custom
 */
export function applyCustom(manifest, custom, validate) {
  const added = (custom.added ?? []).filter((p) => !manifest.panels.some((q) => q.id === p.id));
  const candidate = { ...manifest, panels: [...manifest.panels, ...added], layout: custom.layout };
  const v = validate(candidate);
  return v.ok
    ? { ok: true, manifest: v.manifest }
    : { ok: false, error: JSON.stringify(v.errors).slice(0, 200) };
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
