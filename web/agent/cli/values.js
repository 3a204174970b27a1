// Flag values the agent commands share: durations, bounded counts, milliseconds, and message text
// from the words after the peer (or stdin for "-"). Each refusal names the flag and what it takes.
import fs from 'node:fs';
import { UsageError } from './args.js';

const fail = (msg) => {
  throw new UsageError(msg);
};

export function parseDuration(flag, s) {
  const m = /^(\d+)(ms|s|m|h|d)$/.exec(String(s ?? ''));
  if (!m) fail(`${flag} needs a duration like 500ms, 30s, 15m, 2h or 7d (got '${s}')`);
  const mult = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2]];
  return Number(m[1]) * mult;
}

export function parseCount(flag, s, max) {
  if (!/^\d+$/.test(String(s ?? '')) || Number(s) > max)
    fail(`${flag} must be a whole number from 0 to ${max} (got '${s}')`);
  return Number(s);
}

export function msFlag(flag, s) {
  if (s === undefined) return undefined;
  if (!/^\d+$/.test(s))
    fail(`${flag} must be a whole number of milliseconds, 0 or more (got '${s}')`);
  return Number(s);
}

/** The words as one text, or stdin when the only word is "-" (long text does not fit in argv). */
export function textFrom(words) {
  return words.length === 1 && words[0] === '-' ? fs.readFileSync(0, 'utf8') : words.join(' ');
}

/** The flag that replaces {text} with a JSON payload (send, broadcast). */
export const PAYLOAD_JSON_OPTION = Object.freeze({
  type: 'string',
  value: 'JSON',
  help: 'send this JSON payload instead of {text}',
});

/** A flag's JSON value, parsed (undefined when the flag is not given). */
export function jsonFlag(flag, s) {
  if (s === undefined) return undefined;
  try {
    return JSON.parse(s);
  } catch {
    return fail(`${flag} must be valid JSON`);
  }
}

/** A message payload: --payload-json as given, else {text} from the words. */
export function payloadFrom(v, words, what) {
  if (v['payload-json'] !== undefined) return jsonFlag('--payload-json', v['payload-json']);
  const text = textFrom(words);
  if (!text) fail(`${what}: give the text to send (or "-" to read it from stdin)`);
  return { text };
}
