// The relay's --rtc-file (cockpit protocol § WebRTC video): a Cloudflare Realtime SFU app's id and
// secret, optionally a TURN key, and optionally the API's base URL (the local SFU's in tests and
// the demo). The names follow Cloudflare's dashboard and docs: App ID and App Secret, TURN key ID
// and its API token. The Worker's secret holds the same JSON text. Pure: text in, a value out.
//
//   {"appId": "...", "appSecret": "...", "turnKeyId": "...", "turnKeyApiToken": "...",
//    "baseUrl": "https://rtc.live.cloudflare.com"}
import { CLOUDFLARE_BASE_URL } from './client.js';

/** The file's bound: a handful of short strings. */
export const MAX_RTC_FILE_BYTES = 64 * 1024;
const MAX_VALUE_CHARS = 512;
const KEYS = ['appId', 'appSecret', 'turnKeyId', 'turnKeyApiToken', 'baseUrl'];
const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);
const EXAMPLE =
  '{"appId": "<SFU app id>", "appSecret": "<SFU app secret>"} (plus "turnKeyId" and "turnKeyApiToken" for TURN)';

/** @typedef {import('./rtc-file.d.ts').RtcConfig} RtcConfig */

/**
 * Parses and checks the rtc file's text.
 * @param {unknown} text
 * @param {{source?: string}} [options]
 * @returns {{ok: true, rtc: RtcConfig} | {ok: false, error: string}}
 */
export function parseRtcFile(text, { source = 'the rtc file' } = {}) {
  /** @returns {{ok: false, error: string}} */
  const bad = (why) => ({ ok: false, error: `${source}: ${why}` });
  if (typeof text !== 'string') return bad('expected its text');
  if (new TextEncoder().encode(text).length > MAX_RTC_FILE_BYTES)
    return bad(`it is over ${MAX_RTC_FILE_BYTES} bytes; it holds only ${EXAMPLE}`);
  let v;
  try {
    v = JSON.parse(text);
  } catch (e) {
    return bad(`it is not JSON (${e.message}); write ${EXAMPLE}`);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    return bad(`it must be one JSON object: ${EXAMPLE}`);
  for (const key of Object.keys(v)) {
    if (KEYS.includes(key)) continue;
    const near = KEYS.find((k) => squash(k) === squash(key));
    return bad(
      near
        ? `unknown key "${key}": did you mean "${near}"? The keys are ${KEYS.join(', ')}`
        : `unknown key "${key}"; the keys are ${KEYS.join(', ')}`,
    );
  }
  const rtc = /** @type {RtcConfig} */ ({});
  for (const key of ['appId', 'appSecret']) {
    if (v[key] === undefined)
      return bad(
        `"${key}" is missing: copy the SFU app's ${key === 'appId' ? 'App ID' : 'App Secret'} from the Cloudflare dashboard (Realtime > SFU)`,
      );
    const err = checkValue(key, v[key]);
    if (err) return bad(err);
    rtc[key] = v[key];
  }
  const turn = ['turnKeyId', 'turnKeyApiToken'].filter((k) => v[k] !== undefined);
  if (turn.length === 1)
    return bad(
      `"${turn[0]}" is set without "${turn[0] === 'turnKeyId' ? 'turnKeyApiToken' : 'turnKeyId'}": a TURN key needs both its ID and its API token (Cloudflare dashboard: Realtime > TURN), or leave both out`,
    );
  for (const key of turn) {
    const err = checkValue(key, v[key]);
    if (err) return bad(err);
    rtc[key] = v[key];
  }
  const base = v.baseUrl === undefined ? { url: CLOUDFLARE_BASE_URL } : checkBaseUrl(v.baseUrl);
  if ('error' in base) return bad(base.error);
  rtc.baseUrl = base.url;
  return { ok: true, rtc };
}

const squash = (s) => s.toLowerCase().replace(/[^a-z]/g, '');

function checkValue(key, value) {
  if (typeof value !== 'string') return `"${key}" must be a string`;
  if (!value.length) return `"${key}" is empty`;
  if (value.length > MAX_VALUE_CHARS)
    return `"${key}" is ${value.length} characters; at most ${MAX_VALUE_CHARS}`;
  if (/\s/.test(value))
    return `"${key}" contains whitespace: copy the value alone, without spaces or line breaks`;
  return null;
}

/** @returns {{url: string} | {error: string}} */
function checkBaseUrl(value) {
  if (typeof value !== 'string')
    return { error: '"baseUrl" must be a string such as "https://rtc.live.cloudflare.com"' };
  let u;
  try {
    u = new URL(value);
  } catch {
    return {
      error: `"baseUrl" is not a URL: ${JSON.stringify(value)}; use "https://rtc.live.cloudflare.com" or the local SFU's "http://127.0.0.1:PORT"`,
    };
  }
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && LOOPBACK.has(u.hostname)))
    return {
      error: `"baseUrl" must be https (plain http only on loopback, for the local SFU): ${value}`,
    };
  if (u.username || u.password || u.search || u.hash)
    return { error: `"baseUrl" must not carry credentials, a query or a fragment: ${value}` };
  const path = u.pathname.replace(/\/+$/, '');
  if (path !== '' && path !== '/v1')
    return {
      error: `"baseUrl" is the API's origin (optionally with /v1), not ${u.pathname}: use ${u.origin}`,
    };
  return { url: u.origin };
}
