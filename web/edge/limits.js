// Abuse limits for a room endpoint (room-relay.md § Trust, the paragraph on denial of service):
// every check runs before the relay core parses a byte. The limits, their defaults, the close
// codes and every verdict come from the room core's admission component
// (src/room/admission.hpp); this file loads it, runs it through the one driver
// (web/glue/driver.js) and carries its budget reads and writes to the host's store. Shared by the
// Worker (web/edge/room-object.js) and the Deno host (web/host/rooms.js) through room-host.js.
//
// What answers what (documented in docs/rooms.md § Limits):
//   HTTP 401            bad, expired or missing ticket (before any WebSocket exists)
//   HTTP 429            the principal is cooling down after exhausting its budget (Retry-After)
//   HTTP 503            the room already holds maxConnectionsPerRoom sockets (Retry-After)
//   close 1003          a binary frame: the room protocol is JSON text
//   close 1007          a frame the relay core could not read (not JSON, wrong room, ...)
//   close 1008          ejected by the room's policy (a hostile or broken envelope)
//   close 1009          a frame larger than maxFrameBytes
//   close 1011          the room's storage failed; reconnect and the client resends its tail
//   close 4008          this connection sent more than its message rate
//   close 4009          the principal (writer) spent its budget across all its connections
//   close 4010          a slow reader: more than maxBufferedBytes queued for it (what it has
//                       not acknowledged reading, which requireReadAck holds every reader to;
//                       its bufferedAmount; or, with requireReadAck off and neither, the core's
//                       model of its queue; presence updates are dropped first)
import { createDriver } from '../glue/driver.js';
import { loadTetherModule } from '../glue/load.js';

let mod = null;
/** The close codes (CloseCode in src/room/admission.hpp). */
export let CLOSE;
/** Every limit with its default (src/room/admission.hpp). */
export let DEFAULT_LIMITS;

function adopt(m) {
  mod = m;
  CLOSE = Object.freeze({ ...m.roomCloseCodes() });
  DEFAULT_LIMITS = Object.freeze({ ...m.roomAdmissionDefaults() });
}

// Node and Deno load the module on import; workerd and browsers call initLimits.
if (globalThis.process?.versions?.node || globalThis.Deno)
  adopt(await loadTetherModule({}, 'room'));

/** Loads the admission core where it cannot load itself (workerd: pass { wasmModule }). */
export async function initLimits(options) {
  adopt(await loadTetherModule(options, 'room'));
}

function loaded() {
  if (!mod)
    throw new Error(
      'tether edge: the WASM module is not loaded; `await initLimits({ wasmModule })` first',
    );
  return mod;
}

/** Merges a partial limits object (from config) over the defaults; the core refuses nonsense. */
export function resolveLimits(partial) {
  const r = loaded().roomParseLimits(JSON.stringify(partial ?? {}));
  if (r.error !== undefined) throw new Error(`tether edge: ${r.error}`);
  return Object.freeze({ ...r.limits });
}

const encoder = new TextEncoder();
let scratch = null;
// A text frame's UTF-8 size, counted only as far as `max` + 1 (the core asks for it only when the
// length in UTF-16 units alone cannot decide).
function utf8Size(text, max) {
  if (scratch === null || scratch.length < max + 4) scratch = new Uint8Array(max + 4);
  const { read, written } = encoder.encodeInto(text, scratch.subarray(0, max + 1));
  return read < text.length ? max + 1 : written;
}

// A frame's UTF-8 size. A broadcast hands every member the same string: measured once.
let lastText = null;
let lastLength = 0;
function utf8Length(text) {
  if (text === lastText) return lastLength;
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x80) n += c >= 0x800 && (c < 0xd800 || c > 0xdfff) ? 2 : 1;
  }
  lastText = text;
  lastLength = n;
  return n;
}

/**
 * The admission core of one host. `store` keeps principal budgets across sockets and restarts:
 * {get(room, writer) -> text | null, put(room, writer, text)} (room-store.js budgetStore).
 * @param {object} limits  from resolveLimits
 * @param {{get(room: string, writer: string): string | null, put(room: string, writer: string, state: string): void} | null} store
 */
export function createAdmission(limits, store, { now = Date.now } = {}) {
  const core = new (loaded().RoomAdmissionCore)(JSON.stringify(limits));
  const verdicts = new Map(); // attempt token -> verdict, until admit() reads it
  const driver = createDriver(
    { pollAction: () => core.pollAction(), pollEvent: () => core.pollEvent() },
    {
      perform(a) {
        if (a.kind === 'load-budget') {
          let saved = null;
          try {
            saved = store?.get(a.scope, a.writer) ?? null;
          } catch {
            // An unreadable budget counts as none: the limits still hold for this process.
          }
          driver.input((t) => core.budget(a.scope, a.writer, saved ?? '', t));
          return;
        }
        try {
          store?.put(a.scope, a.writer, a.state);
        } catch {
          // A budget that fails to save is only less strict after a restart; never fail the socket.
        }
      },
      event: (v) => verdicts.set(v.token, v),
    },
    { now },
  );
  return {
    limits,
    /** Before accepting a socket: null to accept, else {status, message, retryAfter}. */
    attempt(room, writer) {
      const token = driver.input((t) => core.attempt(room, writer, t));
      const v = verdicts.get(token);
      verdicts.delete(token);
      if (v === undefined) {
        // The store answers synchronously, so this is a store that never answered.
        return {
          status: 503,
          message: 'the budget store did not answer; retry shortly',
          retryAfter: 1,
        };
      }
      return v.status === 0
        ? null
        : { status: v.status, message: v.message, retryAfter: v.retryAfter };
    },
    /**
     * A socket was accepted, or survived a hibernation (`resumed`, with the `readState` kept for
     * it before, if any): its admission id. `exactBuffered`: the socket's bufferedAmount counts
     * every byte its reader has not taken (an HTTP member's queue).
     * @param {string} room
     * @param {string} writer
     * @param {{resumed?: boolean, readState?: string | null, exactBuffered?: boolean}} [how]
     */
    opened: (room, writer, { resumed = false, readState = null, exactBuffered = false } = {}) =>
      driver.input((t) => core.opened(room, writer, t, resumed, readState ?? '', exactBuffered)),
    /** What to keep for `conn` across a hibernation (changes with every frame sent): text. */
    readState: (conn) => core.readState(conn),
    /** One incoming frame: null to pass it to the relay, else {code, reason} to close with. */
    frame(conn, data) {
      const text = typeof data === 'string';
      const length = text ? data.length : (data?.byteLength ?? 0);
      let code = driver.input((t) => core.frame(conn, !text, length, -1, t));
      if (code === mod.roomFrameMeasure) {
        const bytes = utf8Size(data, limits.maxFrameBytes);
        code = driver.input((t) => core.frame(conn, false, length, bytes, t));
      }
      return code === mod.roomFramePass ? null : { code, reason: core.closeReason() };
    },
    /**
     * One frame about to be sent (the slow-reader rule, in the core): null to send it, 'drop' for
     * a presence update the reader loses, else {code, reason} to close with. `buffered`: the
     * socket's bufferedAmount, or undefined where the runtime has none (workerd).
     */
    send(conn, text, ephemeral, buffered) {
      // Once per recipient of every frame, so the core is called without a drain: handle_send
      // only updates that socket's counters and queues no action or event (src/room/admission.hpp;
      // tests/native/room/test_admission.cpp holds it to that), and a drain would cross into WASM
      // twice more per recipient to find nothing.
      const code = core.send(conn, utf8Length(text), ephemeral === true, buffered ?? -1, now());
      if (code === mod.roomSendPass) return null;
      if (code === mod.roomSendDrop) return 'drop';
      return { code, reason: core.closeReason() };
    },
    /** A reader's acknowledgement (the relay's `read`): true when the core credited it. */
    read: (conn, bytes) => core.read(conn, bytes),
    /** The interval readers acknowledge at: the relay's readAckBytes. */
    readAckBytes: core.readAckBytes(),
    droppedEphemeral: () => core.droppedEphemeral(),
    closed: (conn) => driver.input((t) => core.closed(conn, t)),
    connections: (room) => core.connections(room),
    // The core itself, for a relay that judges frames and sends inside its own calls (tether's
    // relay, option `admission`: web/glue/relay.js judgedBy); the ids are opened()'s.
    boundary: core,
  };
}
