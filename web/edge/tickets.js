// Signed connection tickets (room-relay.md § Trust: "the relay never mints identity"). A server
// that knows who the user is mints a short-lived ticket; the room endpoint (web/edge/worker.js,
// web/host/rooms.js) checks it before any WebSocket exists and takes `writer` and `kind` from it,
// never from the client's messages. HMAC-SHA256 through Web Crypto, so one file runs in Workers,
// Deno, Node >= 20 and browsers.
//
// Format: `t1.<payload>.<mac>`, both base64url without padding. payload is the UTF-8 JSON
// {"w": writer, "k": "human"|"agent", "r": room, "exp": unix seconds}; mac is
// HMAC-SHA256(secret, "t1." + payload). The room is part of the signed payload, so a ticket for
// one room opens no other.

export const TICKET_VERSION = 't1';
/** Longest ticket accepted: checked before any decoding or crypto. */
export const MAX_TICKET_CHARS = 2048;
/** Shortest secret accepted: an HMAC key should carry at least 256 bits. */
export const MIN_SECRET_CHARS = 32;
/** Longest lifetime a minted ticket may have: tickets are for connecting, not sessions. */
export const MAX_TICKET_TTL_SECONDS = 24 * 3600;
export const KINDS = Object.freeze(['human', 'agent']);
const MAX_ID_BYTES = 512; // src/relay/room_limits.hpp kMaxIdBytes / kMaxRoomNameBytes

const enc = new TextEncoder();
const dec = new TextDecoder('utf-8', { fatal: true });
const keys = new Map(); // secret -> Promise<CryptoKey>

function checkSecret(secret) {
  if (typeof secret !== 'string' || secret.length < MIN_SECRET_CHARS) {
    throw new Error(
      `tether tickets: the ticket secret must be a string of at least ${MIN_SECRET_CHARS} characters; ` +
        'set TICKET_SECRET (`wrangler secret put TICKET_SECRET`, or --ticket-secret-file for the Deno host)',
    );
  }
}

function key(secret) {
  let k = keys.get(secret);
  if (!k) {
    k = crypto.subtle.importKey(
      'raw',
      enc.encode(secret),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign', 'verify'],
    );
    if (keys.size > 8) keys.clear(); // secrets rotate rarely; never grow without bound
    keys.set(secret, k);
  }
  return k;
}

function b64url(bytes) {
  let s = '';
  for (let i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function unb64url(text) {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null;
  const padded = text.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((text.length + 3) % 4);
  try {
    const s = atob(padded);
    const out = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out;
  } catch {
    return null;
  }
}

function cleanId(v) {
  // The same shape the relay core accepts for ids: non-empty, no control characters, bounded.
  return (
    typeof v === 'string' &&
    v.length > 0 &&
    enc.encode(v).length <= MAX_ID_BYTES &&
    !/[\u0000-\u001f\u007f]/.test(v)
  );
}

/**
 * Mints a ticket. `ttlSeconds` defaults to 5 minutes (a ticket only has to live until the socket opens).
 * @param {string} secret
 * @param {{writer: string, kind?: 'human'|'agent', room: string, ttlSeconds?: number, nowMs?: number}} claims
 * @returns {Promise<string>}
 */
export async function mintTicket(
  secret,
  { writer, kind = 'human', room, ttlSeconds = 300, nowMs = Date.now() },
) {
  checkSecret(secret);
  if (!cleanId(writer))
    throw new Error(
      'tether tickets: writer must be a non-empty id of at most 512 bytes without control characters',
    );
  if (!cleanId(room))
    throw new Error(
      'tether tickets: room must be a non-empty name of at most 512 bytes without control characters',
    );
  if (!KINDS.includes(kind))
    throw new Error(
      `tether tickets: kind must be one of ${KINDS.join(', ')}, not ${JSON.stringify(kind)}`,
    );
  if (!(ttlSeconds > 0 && ttlSeconds <= MAX_TICKET_TTL_SECONDS)) {
    throw new Error(`tether tickets: ttlSeconds must be in (0, ${MAX_TICKET_TTL_SECONDS}]`);
  }
  const exp = Math.floor(nowMs / 1000) + Math.ceil(ttlSeconds);
  const payload = b64url(enc.encode(JSON.stringify({ w: writer, k: kind, r: room, exp })));
  const signed = `${TICKET_VERSION}.${payload}`;
  const mac = new Uint8Array(
    await crypto.subtle.sign('HMAC', await key(secret), enc.encode(signed)),
  );
  const ticket = `${signed}.${b64url(mac)}`;
  if (ticket.length > MAX_TICKET_CHARS)
    throw new Error('tether tickets: the ticket is too long; shorten writer or room');
  return ticket;
}

const fail = (reason, message) => ({ ok: false, reason, message });

/**
 * Checks a ticket: signature first (constant time, Web Crypto's verify), then expiry and room.
 * @returns {Promise<{ok: true, writer: string, kind: string, room: string, exp: number} |
 *   {ok: false, reason: 'missing'|'malformed'|'signature'|'expired'|'room', message: string}>}
 */
export async function verifyTicket(secret, ticket, { room, nowMs = Date.now() } = {}) {
  checkSecret(secret);
  if (typeof ticket !== 'string' || ticket.length === 0) {
    return fail(
      'missing',
      'no ticket: connect with ?ticket=<ticket minted by your server (tether tickets.mintTicket)>',
    );
  }
  if (ticket.length > MAX_TICKET_CHARS)
    return fail('malformed', `the ticket is longer than ${MAX_TICKET_CHARS} characters`);
  const parts = ticket.split('.');
  if (parts.length !== 3 || parts[0] !== TICKET_VERSION) {
    return fail(
      'malformed',
      `a ticket is ${TICKET_VERSION}.<payload>.<mac>; mint it with tickets.mintTicket`,
    );
  }
  const mac = unb64url(parts[2]);
  const payloadBytes = unb64url(parts[1]);
  if (!mac || !payloadBytes || mac.length !== 32)
    return fail('malformed', 'the ticket is not base64url');
  const ok = await crypto.subtle.verify(
    'HMAC',
    await key(secret),
    mac,
    enc.encode(`${parts[0]}.${parts[1]}`),
  );
  if (!ok)
    return fail(
      'signature',
      "the ticket was not signed with this server's TICKET_SECRET; mint a new one",
    );
  let claims;
  try {
    claims = JSON.parse(dec.decode(payloadBytes));
  } catch {
    return fail('malformed', 'the ticket payload is not UTF-8 JSON');
  }
  const { w, k, r, exp } = claims ?? {};
  if (!cleanId(w) || !cleanId(r) || !KINDS.includes(k) || !Number.isFinite(exp)) {
    return fail(
      'malformed',
      'the ticket payload needs w (writer), k (human|agent), r (room) and exp',
    );
  }
  if (exp * 1000 <= nowMs)
    return fail('expired', 'the ticket has expired; mint a fresh one just before connecting');
  if (room !== undefined && r !== room)
    return fail('room', `the ticket is for room ${JSON.stringify(r)}, not ${JSON.stringify(room)}`);
  return { ok: true, writer: w, kind: k, room: r, exp };
}
