// How a decoded JSON log message is shown: its level, text and time. Log channels carry plain JSON
// objects (json.v1 or any *.json.vN, decoded by the C++ decode core); robots name the fields
// differently, so this picks the common spellings (`level`/`severity`/`lvl`, `msg`/`message`/
// `text`) and maps numeric levels from ROS 2 (10..50) and Foxglove's Log schema (1..5). This is
// presentation, not protocol: an entry with none of these fields still shows, as its JSON.

export const LEVELS = ['debug', 'info', 'warn', 'error', 'fatal'];

const NAMES = {
  trace: 'debug',
  debug: 'debug',
  info: 'info',
  notice: 'info',
  warn: 'warn',
  warning: 'warn',
  error: 'error',
  err: 'error',
  fatal: 'fatal',
  critical: 'fatal',
  crit: 'fatal',
};

/** A level name from a string or a number; 'info' when the entry has none. */
export function levelOf(value) {
  if (typeof value === 'string') return NAMES[value.toLowerCase()] ?? 'info';
  if (typeof value === 'number' && Number.isFinite(value)) {
    // Foxglove's Log: 1 debug .. 5 fatal; ROS 2: 10 debug .. 50 fatal.
    const step = value >= 10 ? Math.round(value / 10) : Math.round(value);
    return LEVELS[Math.min(LEVELS.length, Math.max(1, step)) - 1];
  }
  return 'info';
}

/**
 * @param {unknown} value the decoded payload
 * @param {number} headerTs the frame header's ts (seconds), used when the entry has none
 * @returns {{level: string, text: string, ts: number, source: string}}
 */
export function logEntry(value, headerTs) {
  if (!value || typeof value !== 'object' || Array.isArray(value))
    return { level: 'info', text: JSON.stringify(value), ts: headerTs, source: '' };
  return fromObject(/** @type {Record<string, unknown>} */ (value), headerTs);
}

/**
 * @param {Record<string, unknown>} value
 * @param {number} headerTs
 */
function fromObject(value, headerTs) {
  const level = levelOf(value.level ?? value.severity ?? value.lvl);
  const said = value.msg ?? value.message ?? value.text;
  let text;
  if (typeof said === 'string') text = said;
  else {
    const { level: _l, severity: _s, lvl: _v, ts: _t, ...rest } = value;
    text = JSON.stringify(rest);
  }
  const ts = typeof value.ts === 'number' && Number.isFinite(value.ts) ? value.ts : headerTs;
  const from = value.name ?? value.source ?? value.node;
  return { level, text, ts, source: typeof from === 'string' ? from : '' };
}
