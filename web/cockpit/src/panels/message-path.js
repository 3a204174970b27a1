// Message paths for plots: `pose.x`, `stats.teleop.vx`, `a.b[0].c`. The first part names the
// channel (the longest channel name that matches, so channel names may hold dots); the rest walks
// the decoded JSON value by key and [index]. A UI concern: the decode core has already parsed and
// bounded the value.

/**
 * @param {string} text
 * @param {string[]} channels the channel names to match
 * @returns {{ok: true, ch: string, steps: (string|number)[]} | {ok: false, error: string}}
 */
export function parseMessagePath(text, channels) {
  const t = text.trim();
  const ch = channels
    .filter((c) => t === c || t.startsWith(`${c}.`) || t.startsWith(`${c}[`))
    .sort((a, b) => b.length - a.length)[0];
  if (!ch)
    return {
      ok: false,
      error: `"${t}" names no JSON channel; start with one of ${channels.join(', ')}`,
    };
  const rest = t.slice(ch.length);
  const steps = [];
  const re = /\.([A-Za-z_$][\w$-]*)|\[(\d+)\]|\["([^"\\]*)"\]/y;
  let at = 0;
  while (at < rest.length) {
    re.lastIndex = at;
    const m = re.exec(rest);
    if (!m)
      return {
        ok: false,
        error: `"${t}": cannot read the path at "${rest.slice(at)}"; use .key, [index] or ["key"]`,
      };
    steps.push(m[1] ?? (m[2] !== undefined ? Number(m[2]) : m[3]));
    at = re.lastIndex;
  }
  if (!steps.length) return { ok: false, error: `"${t}": name a field, e.g. ${ch}.x` };
  return { ok: true, ch, steps };
}

/** The number at `steps` in `value`, or null when it is missing or not a finite number. */
export function valueAt(value, steps) {
  let v = value;
  for (const s of steps) {
    if (v === null || typeof v !== 'object') return null;
    v = v[s];
  }
  if (typeof v === 'boolean') return v ? 1 : 0;
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}
