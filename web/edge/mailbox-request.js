// The front door of the mailbox endpoint, shared by the mailbox Worker (mailbox-worker.js) and the
// Deno host (web/host/mailbox.js), as room-request.js is the rooms': the core's front_door decides
// where a request goes or answers it before any body is read; then the body is read up to the
// core's request limit (one byte more, so the core sees it is over), and the host adds the random
// bytes the core needs. Nothing here knows a route, a limit or an error text.

const MAILBOX_PREFIX = '/mailboxes';

/** True for the paths the mailbox endpoint answers (everything else is another endpoint's). */
export function isMailboxPath(pathname) {
  return pathname === MAILBOX_PREFIX || pathname.startsWith(`${MAILBOX_PREFIX}/`);
}

/**
 * @param {Request} request
 * @param {import('../glue/mailbox.d.ts').MailboxApi} api
 * @returns {Promise<{response: Response} | {route: string, mailbox: string, upgrade: boolean,
 *   input: import('../glue/mailbox.d.ts').MailboxRequestInput}>}
 */
export async function readMailboxRequest(request, api, entropy = api.entropy()) {
  const url = new URL(request.url);
  const target = url.pathname + url.search;
  const upgrade = request.headers.get('upgrade')?.toLowerCase() === 'websocket';
  const declared = request.headers.get('content-length');
  const length = declared === null || !/^\d+$/.test(declared) ? -1 : Number(declared);
  const door = api.frontDoor(request.method, target, length, upgrade);
  if (door.ok === false) return { response: outcomeResponse(door) };
  const body = await readBounded(request, api.limits.maxRequestBytes + 1);
  return {
    route: door.route,
    mailbox: door.route === 'create' ? api.mailboxIdFor(entropy) : door.mailbox,
    upgrade,
    input: {
      method: request.method,
      target,
      authorization: request.headers.get('authorization') ?? '',
      body,
      entropy,
    },
  };
}

/** The core's answer as an HTTP response (JSON, Retry-After in whole seconds when it gave one). */
export function outcomeResponse({ status, body, retryAfterMs }) {
  const headers = {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
  };
  if (retryAfterMs >= 0)
    headers['retry-after'] = String(Math.max(1, Math.ceil(retryAfterMs / 1000)));
  return new Response(body, { status, headers });
}

/** At most `max` bytes of the body; a longer body is cut there (and its stream cancelled). */
export async function readBounded(request, max) {
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks = [];
  let total = 0;
  while (total < max) {
    const { done, value } = await reader.read();
    if (done) break;
    const part = value.length > max - total ? value.subarray(0, max - total) : value;
    chunks.push(part);
    total += part.length;
  }
  if (total >= max) await reader.cancel().catch(() => {});
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

export const hexOf = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');

export function bytesOfHex(hex) {
  const out = new Uint8Array(hex.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}
