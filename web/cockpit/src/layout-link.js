// Layouts people own, as stored and shared: per robot in localStorage, and in the link
// (#layout=… holding base64url JSON). What is applied is checked by the wire core like any
// manifest, so a saved layout that no longer fits the robot's manifest falls back to the
// manifest's own, with a note.

export const MAX_SHARED_CHARS = 8192; // a link longer than this is refused, not truncated
const STORAGE = 'tether.layout.';

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
