// The sidecar's link to the room relay: which URL it connects to, with which ticket, and what to
// tell the user when it cannot get in. The transport reports each failed attempt with the relay's
// actual answer (web/peer/relay-transport.js onFailure); this names it, says whether retrying can
// help, and says what to do. `tether agent status` shows it and `join` exits on it.
//
// The room endpoint of both relays (web/edge/room-request.js, served by the Worker and by
// web/host/rooms.js) is `/rooms/<name>?ticket=<ticket>`; --relay is the relay's base URL and the
// agent adds the rest. Without a ticket it connects as the loopback test relay expects
// (?writer=&kind=, tests/e2e/lib/room_server.mjs), which production relays answer with 401.
import { ROOMS_PATH, parseRefusal } from '../../edge/room-request.js';
import { redact } from '../redact.js';

const MAX_QUOTED = 240; // of a relay's HTTP body, quoted in our messages

/** Node's codes for a TLS certificate the client does not trust (tls.checkServerIdentity etc.). */
const CERT_CODES = new Set([
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'HOSTNAME_MISMATCH',
]);

/** A --relay URL with any ?ticket= taken out (it is kept apart from the settings and never shown). */
export function splitTicket(relay) {
  const u = new URL(relay);
  const ticket = u.searchParams.get('ticket');
  u.searchParams.delete('ticket');
  return { relay: u.toString(), ticket };
}

/** The URL the transport connects to: <relay base>/rooms/<room>, with the ticket if there is one. */
export function roomUrl(relay, room, { ticket = null, id, kind = 'agent' }) {
  const u = new URL(relay);
  const tail = `${ROOMS_PATH}${encodeURIComponent(room)}`;
  if (!u.pathname.endsWith(tail)) u.pathname = u.pathname.replace(/\/*$/, '') + tail;
  if (ticket) u.searchParams.set('ticket', ticket);
  else {
    // The loopback test relay's stand-in for auth; a production relay wants a ticket.
    if (!u.searchParams.has('writer')) u.searchParams.set('writer', id);
    if (!u.searchParams.has('kind')) u.searchParams.set('kind', kind);
  }
  return u.toString();
}

const oneLine = (s) =>
  String(s ?? '')
    .replace(/[\u0000-\u001f\u007f]+/g, ' ')
    .trim()
    .slice(0, MAX_QUOTED);

function hostOf(url) {
  const u = new URL(url);
  return u.host || u.hostname;
}

// The relay's 401 reasons (web/edge/tickets.js verifyTicket), each with what is true and the fix.
const REJOIN = 'then `tether agent join --ticket NEW`';
const TICKET_FIX = {
  missing: `this relay needs a ticket: give \`tether agent join\` --ticket TICKET (or set TETHER_TICKET); for a local relay, mint one with \`tether rooms ticket --room ROOM --id ID\``,
  signature: `bad signature: the ticket was not signed with this relay's TICKET_SECRET; mint one with the relay's secret, ${REJOIN}`,
  expired: `the ticket has expired; mint a fresh one, ${REJOIN}`,
  room: null, // the relay's own words name both rooms
  malformed: `the ticket is not a tether ticket (t1.<payload>.<mac>); check what was passed as --ticket, ${REJOIN}`,
};

/**
 * Names one failed attempt (a RelayFailure from the transport).
 * @returns {{kind: string, retryable: boolean, message: string}}
 */
export function describeFailure(f, { url, room }) {
  const where = hostOf(url);
  const path = new URL(url).pathname;
  if (f.stage === 'connect') {
    const code = f.code ?? '';
    if (code === 'ECONNREFUSED')
      return {
        kind: 'refused',
        retryable: true,
        message: `connection refused by ${where}: nothing listens there. Start the relay, or fix --relay`,
      };
    if (code === 'ENOTFOUND')
      return {
        kind: 'dns',
        retryable: false,
        message: `cannot resolve ${new URL(url).hostname} (ENOTFOUND): check the host in --relay`,
      };
    if (CERT_CODES.has(code) || /^ERR_TLS_/.test(code))
      return {
        kind: 'tls',
        retryable: false,
        message: `TLS: ${where} presented a certificate this machine does not trust (${code}: ${oneLine(f.message)}). Use a certificate from a public CA, or point NODE_EXTRA_CA_CERTS at your CA's PEM file`,
      };
    if (code === 'EPROTO' || /^ERR_SSL_/.test(code) || /SSL routines/.test(f.message ?? '')) {
      // OpenSSL's text is "...:SSL routines:<function>:<reason>:<file>:<line>"; the reason says it.
      const said = /SSL routines:[^:]*:([^:]+)/.exec(f.message ?? '')?.[1] ?? oneLine(f.message);
      return {
        kind: 'tls',
        retryable: false,
        message: `TLS handshake with ${where} failed (${code || 'TLS'}: ${said}); a wss:// URL to a relay that serves plain ws:// fails like this: check the scheme in --relay`,
      };
    }
    return {
      kind: 'network',
      retryable: true,
      message: `cannot reach ${where} (${code || 'no reason given'}${f.message ? `: ${oneLine(f.message)}` : ''})`,
    };
  }
  if (f.stage === 'upgrade') {
    const body = oneLine(f.body);
    const said = body ? `: "${body}"` : '';
    if (f.status === 401) {
      const m = parseRefusal(body);
      const reason = m && m.reason in TICKET_FIX ? m.reason : 'unknown';
      const fix =
        TICKET_FIX[reason] ??
        `${m?.message || body || 'no reason given'}; mint one for this room, ${REJOIN}`;
      return {
        kind: `ticket-${reason}`,
        retryable: false,
        message: `the relay refused the ticket (HTTP 401 ${reason}): ${fix}`,
      };
    }
    if (f.status === 404)
      return {
        kind: 'not-found',
        retryable: false,
        message: `the relay has no room endpoint at ${path} (HTTP 404${said}); --relay is the relay's base URL (ws://HOST:PORT/) and the agent adds ${ROOMS_PATH}<room>`,
      };
    if (f.status === 429 || f.status === 503 || f.status === 502 || f.status === 504)
      return {
        kind: `http-${f.status}`,
        retryable: true,
        message: `the relay is busy (HTTP ${f.status}${said})${f.retryAfter ? `; it asks to retry after ${f.retryAfter} s` : ''}; the sidecar keeps retrying`,
      };
    return {
      kind: `http-${f.status}`,
      retryable: false,
      message: `the relay answered HTTP ${f.status} at ${path}${said}`,
    };
  }
  if (f.stage === 'rejected')
    return { kind: 'rejected', retryable: false, message: oneLine(f.message) };
  return {
    kind: 'closed',
    retryable: true,
    message: `the relay closed the connection before we were in room '${room}' (code ${f.code}${f.reason ? `: ${oneLine(f.reason)}` : ''})`,
  };
}

/** Tracks the link for `status`: attempts, the last failure, when we got in. */
export class LinkState {
  /** @param {{url: string, room: string, log: (msg: string) => void}} o */
  constructor({ url, room, log }) {
    this.url = url;
    this.room = room;
    this.log = log;
    this.attempts = 0;
    this.failure = null;
    this.everConnected = false;
    this.lastLogged = '';
    this.repeats = 0;
  }

  /** options.onFailure of the transport. */
  failed(f) {
    this.attempts = Math.max(this.attempts, f.attempt);
    const d = describeFailure(f, { url: this.url, room: this.room });
    this.failure = { ...d, attempt: f.attempt, at: Date.now() };
    // A relay that stays down costs one log line per change, then one per 100 attempts.
    if (d.message !== this.lastLogged || ++this.repeats % 100 === 0) {
      this.log(
        redact(
          `cannot join room '${this.room}' via ${this.url} (attempt ${f.attempt}): ${d.message}${d.retryable ? '; retrying' : ''}`,
        ),
      );
      if (d.message !== this.lastLogged) this.repeats = 0;
      this.lastLogged = d.message;
    }
  }

  /** The transport is in the room (first time or again). */
  joined() {
    if (this.failure || !this.everConnected)
      this.log(
        redact(
          `in room '${this.room}' via ${this.url}${this.attempts ? ` after ${this.attempts} failed attempt(s)` : ''}`,
        ),
      );
    this.everConnected = true;
    this.failure = null;
    this.attempts = 0;
    this.lastLogged = '';
  }

  status() {
    return { everConnected: this.everConnected, attempts: this.attempts, failure: this.failure };
  }
}
