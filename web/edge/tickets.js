// Signed connection tickets (room-relay.md § Trust: "the relay never mints identity"). A server
// that knows who the user is mints a short-lived ticket; the room endpoint (web/edge/worker.js,
// web/host/rooms.js) checks it before any WebSocket exists and takes `writer` and `kind` from it,
// never from the client's messages. The format, the HMAC-SHA256, the bounds and every verdict are
// the room core's (src/room/ticket.hpp); this file loads it and passes strings through.
//
// Format: `t1.<payload>.<mac>`, both base64url without padding. payload is the UTF-8 JSON
// {"w": writer, "k": "human"|"agent", "r": room, "exp": unix seconds}; mac is
// HMAC-SHA256(secret, "t1." + payload). The room is part of the signed payload, so a ticket for
// one room opens no other.
import { loadTetherModule, loadedTetherModule } from '../glue/load.js';

let mod = null;
/** The format's version tag ('t1'). */
export let TICKET_VERSION;
/** Longest ticket accepted: checked before any decoding or crypto. */
export let MAX_TICKET_CHARS;
/** Shortest secret accepted: an HMAC key should carry at least 256 bits. */
export let MIN_SECRET_CHARS;
/** Longest lifetime a minted ticket may have: tickets are for connecting, not sessions. */
export let MAX_TICKET_TTL_SECONDS;
export let KINDS;
let DEFAULT_TTL_SECONDS;

function adopt(m) {
  mod = m;
  const l = m.roomTicketLimits();
  TICKET_VERSION = l.version;
  MAX_TICKET_CHARS = l.maxTicketChars;
  MIN_SECRET_CHARS = l.minSecretChars;
  MAX_TICKET_TTL_SECONDS = l.maxTtlSeconds;
  DEFAULT_TTL_SECONDS = l.defaultTtlSeconds;
  KINDS = Object.freeze([...l.kinds]);
}

// Node and Deno load the module on import; workerd calls initTickets({ wasmModule }) first.
if (globalThis.process?.versions?.node || globalThis.Deno)
  adopt(await loadTetherModule({}, 'room'));

/**
 * Loads the ticket codec where it cannot load itself (workerd: pass { wasmModule }).
 * @param {import('../glue/load.d.ts').LoadOptions} [options]
 */
export async function initTickets(options) {
  adopt(await loadTetherModule(options, 'room'));
}

// A browser uses the module the app already loaded (through any tether loader), else loads it.
async function codec() {
  if (!mod) adopt(loadedTetherModule('room') ?? (await loadTetherModule({}, 'room')));
  return mod;
}

function checkSecret(m, secret) {
  const error = m.roomTicketSecretError(typeof secret === 'string' ? secret : '');
  if (error) throw new Error(`tether tickets: ${error}`);
}

/**
 * Mints a ticket. `ttlSeconds` defaults to 5 minutes (a ticket only has to live until the socket opens).
 * @param {string} secret
 * @param {{writer: string, kind?: 'human'|'agent', room: string, ttlSeconds?: number, nowMs?: number}} claims
 * @returns {Promise<string>}
 */
export async function mintTicket(
  secret,
  { writer, kind = 'human', room, ttlSeconds, nowMs = Date.now() },
) {
  const m = await codec();
  checkSecret(m, secret);
  const r = m.roomMintTicket(
    secret,
    String(writer ?? ''),
    String(kind),
    String(room ?? ''),
    Number(ttlSeconds ?? DEFAULT_TTL_SECONDS),
    nowMs,
  );
  if (r.error !== undefined) throw new Error(`tether tickets: ${r.error}`);
  return r.ticket;
}

/**
 * Checks a ticket: signature first (constant time), then expiry and room.
 * @param {string} secret
 * @param {unknown} ticket
 * @param {{room?: string, nowMs?: number}} [options]
 * @returns {Promise<import('./tickets.d.ts').TicketCheck>}
 */
export async function verifyTicket(secret, ticket, { room, nowMs = Date.now() } = {}) {
  const m = await codec();
  checkSecret(m, secret);
  let t = typeof ticket === 'string' ? ticket : '';
  // Only what the core needs to see that it is too long crosses the boundary.
  if (t.length > MAX_TICKET_CHARS) t = t.slice(0, MAX_TICKET_CHARS + 1);
  return m.roomVerifyTicket(secret, t, room === undefined ? null : String(room), nowMs);
}
