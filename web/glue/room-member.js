// The room member for JavaScript (src/room/member.hpp): a peer's membership in one room of the
// room relay, under a socket the caller owns. The core builds the hello, reads welcome, member,
// signal, reject and eject, keeps the roster and the lanes, and decides when to dial again; this
// file runs it through the one driver (web/glue/driver.js) and hands its actions to the caller's
// socket functions and its events to the caller (docs/design.md rule 4). Used by
// web/peer/relay-transport.js and web/peer/webrtc-transport.js.
import { createDriver } from './driver.js';
import { loadTetherModule, loadedTetherModule } from './load.js';
import { randomSeed } from './seed.js';
import { textBytes } from './text-bytes.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

// Node and Deno load the module on import. A browser app loads it through any tether loader
// (loadBus, loadSwarm, initPeer) before it creates a transport, since a bundle decides where the
// .wasm file lives.
let mod = null;
let shape = null;
function adopt(m) {
  mod = m;
  const actions = m.roomMemberActionKinds();
  const events = m.roomMemberEventKinds();
  shape = {
    laneSend: m.roomLaneSendNames(),
    events,
    eventBase: m.roomMemberEventBase,
    DIAL: actions.indexOf('dial'),
    TRANSMIT: actions.indexOf('transmit'),
    TEXT: events.indexOf('text'),
    SIGNAL: events.indexOf('signal'),
    defaults: Object.freeze({ ...m.roomMemberDefaults() }),
    proto: m.roomLimits().meshProtoVersion,
  };
}
if (globalThis.process?.versions?.node || globalThis.Deno)
  adopt(await loadTetherModule({}, 'member'));

function ready() {
  if (!mod) {
    const m = loadedTetherModule('member');
    if (!m) {
      throw new Error(
        'tether/peer: the WASM module is not loaded; `await initPeer({ wasmModule })` (or any tether loader) first',
      );
    }
    adopt(m);
  }
  return shape;
}

/** Loads the module where it cannot load itself (a bundled browser app: pass { wasmModule }). */
export async function initPeer(options) {
  adopt(await loadTetherModule(options, 'member'));
}

/** The core's defaults and bounds (maxMessageBytes, maxFrameBytes, reconnect bounds, ...). */
export function memberDefaults() {
  return ready().defaults;
}
/** The op protocol version of the room relay the member speaks. */
export function meshProtoVersion() {
  return ready().proto;
}
/** A hello as the room relay expects it. */
export function helloText({ room, origin, policyVersion, schemaVersion, seq }) {
  ready();
  return mod.roomHelloText(
    String(room),
    String(origin),
    Number(policyVersion),
    schemaVersion ?? NaN,
    seq ?? NaN,
  );
}

const registry =
  typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry((core) => core.delete())
    : null;

/**
 * @param {import('./room-member.d.ts').RoomMemberOptions} options
 * @param {import('./room-member.d.ts').RoomMemberHost} host
 * @param {import('./driver.d.ts').DriverOptions} [driverOptions]
 * @returns {import('./room-member.d.ts').RoomMember}
 */
export function createRoomMember(options, host, driverOptions = {}) {
  const {
    laneSend: LANE_SEND,
    events: EVENT_KINDS,
    eventBase: EVENT_BASE,
    DIAL,
    TRANSMIT,
    TEXT,
    SIGNAL,
  } = ready();
  const json = JSON.stringify({ ...options, seed: options.seed ?? randomSeed() });
  const error = mod.roomMemberOptionsError(json);
  if (error) throw new TypeError(error);
  const core = new mod.RoomMemberCore(json);

  // Texts cross as UTF-8 in WASM memory (bench/README.md): staged in with encodeInto, read out
  // through the outbox's address and length. Views are rebuilt when memory grew.
  const outboxAt = core.outbox() / 8;
  let heap = null;
  let f64 = null;
  const outbox = () => {
    if (mod.HEAPU8 !== heap) {
      heap = mod.HEAPU8;
      f64 = new Float64Array(heap.buffer);
    }
    return f64;
  };
  const textAt = (slot) => {
    const o = outbox();
    const addr = o[outboxAt + slot];
    return decoder.decode(heap.subarray(addr, addr + o[outboxAt + slot + 1]));
  };
  // The sender of a text event: the same few origins over and over, so the last one's bytes and
  // string are kept and compared instead of decoded again.
  let originBytes = new Uint8Array(0);
  let originText = '';
  const originAt = () => {
    const o = outbox();
    const addr = o[outboxAt + 2];
    const len = o[outboxAt + 3];
    if (len === originBytes.length && len <= 64) {
      let same = true;
      for (let i = 0; i < len && same; i++) same = heap[addr + i] === originBytes[i];
      if (same) return originText;
    }
    originBytes = heap.slice(addr, addr + len);
    originText = decoder.decode(originBytes);
    return originText;
  };
  let stagingAt = 0;
  let stagingSize = 0;
  const reserve = (n) => {
    if (n > stagingSize) {
      stagingSize = Math.max(n, 4096);
      stagingAt = core.staging(stagingSize);
    }
    return mod.HEAPU8.subarray(stagingAt, stagingAt + stagingSize);
  };
  const stageText = (text) => {
    if (text.isWellFormed()) return encoder.encodeInto(text, reserve(text.length * 3)).written;
    const bytes = textBytes(text); // a lone surrogate stays invalid UTF-8: the core refuses it
    reserve(bytes.length).set(bytes);
    return bytes.length;
  };
  const stageBytes = (data) => {
    const bytes = ArrayBuffer.isView(data)
      ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
      : new Uint8Array(data);
    reserve(bytes.length).set(bytes);
    return bytes.length;
  };

  // pollNext hands out the next action, else the next event, in one call, and says whether
  // more waits (and, when nothing does, the deadline). An event it returns is kept for the
  // driver's pollEvent. The hot inputs (a relay frame, a lane send) return their first item at
  // once: it waits in `next` for the driver's pollAction. Any other input may queue output, so it
  // sets `more`.
  const NONE = -2;
  let next = NONE;
  let more = true;
  let stashed = null;
  let deadline = null;
  function noteMore() {
    const o = outbox();
    more = o[outboxAt + 6] !== 0;
    if (!more) deadline = o[outboxAt + 5] < 0 ? null : o[outboxAt + 5];
  }
  // A transmit's frame: its UTF-8 bytes in WASM memory (for a socket that takes a text frame as
  // bytes and copies them, Node's ws), or a string. Valid until the next poll.
  const frame = {
    kind: /** @type {const} */ ('transmit'),
    text: () => textAt(0),
    view() {
      const o = outbox();
      const addr = o[outboxAt];
      return heap.subarray(addr, addr + o[outboxAt + 1]);
    },
  };
  const driver = createDriver(
    {
      pollAction() {
        let code = next;
        if (code !== NONE) next = NONE;
        else if (!more) return null;
        else {
          code = core.pollNext();
          noteMore();
        }
        if (code < 0) return null;
        if (code >= EVENT_BASE) {
          const kind = code - EVENT_BASE;
          const name = EVENT_KINDS[kind];
          stashed =
            kind === TEXT || kind === SIGNAL
              ? { kind: name, origin: originAt(), text: textAt(0) }
              : { kind: name, ...core.eventDetails() };
          return null;
        }
        if (code === TRANSMIT) return frame;
        if (code === DIAL)
          return { kind: /** @type {const} */ ('dial'), attempt: outbox()[outboxAt + 4] };
        return { kind: /** @type {const} */ ('hang-up') };
      },
      pollEvent() {
        const e = stashed;
        stashed = null;
        return e;
      },
      pollTimeout: () => deadline,
      handleTimeout(now) {
        more = true;
        core.timeout(now);
      },
    },
    {
      perform(a) {
        if (a === frame) host.transmit(frame);
        else if (a.kind === 'dial') host.dial(a.attempt);
        else host.hangUp();
      },
      event: (e) => host.event(e),
    },
    driverOptions,
  );
  // Runs an input that may queue output.
  const input = (fn) =>
    driver.input((now) => {
      more = true;
      return fn(now);
    });
  // Runs a hot input: with nothing pre-polled yet, its first output is taken at once.
  const hot = (first, plain) =>
    driver.input((now) => {
      if (next !== NONE) {
        more = true;
        return plain(now);
      }
      next = first(now);
      noteMore();
      return undefined;
    });
  const member = {
    start: () => input((now) => core.start(now)),
    linkOpen: () => input((now) => core.linkOpen(now)),
    /** One frame from the relay: text, or bytes (Node's ws), which go in without a string. */
    linkMessage(data) {
      const n = typeof data === 'string' ? stageText(data) : stageBytes(data);
      hot(
        (now) => core.linkMessageStagedNext(n, now),
        (now) => core.linkMessageStaged(n, now),
      );
    },
    linkClosed: () => input((now) => core.linkClosed(now)),
    close: () => {
      input(() => core.close());
      driver.close();
    },
    /** Lanes: one envelope to peer; 'accepted' or why not ('not-open', 'too-big', ...). */
    sendText(peer, text, bufferedBytes) {
      // The peer's id, then the text, in one staging buffer (one call, numbers only).
      const bytes = text.isWellFormed() ? null : textBytes(text);
      const buf = reserve(peer.length * 3 + (bytes ? bytes.length : text.length * 3));
      const p = encoder.encodeInto(peer, buf).written;
      let n;
      if (bytes) {
        buf.set(bytes, p);
        n = bytes.length;
      } else {
        n = encoder.encodeInto(text, buf.subarray(p)).written;
      }
      /** @type {number} the core's lane verdict (an index into LANE_SEND) */
      let verdict;
      hot(
        () => {
          const code = core.sendTextStagedNext(p, n, bufferedBytes);
          verdict = outbox()[outboxAt + 7];
          return code;
        },
        () => (verdict = core.sendTextStaged(p, n, bufferedBytes)),
      );
      return LANE_SEND[verdict];
    },
    /** A signal to `to` with data as JSON text; false when the link is down. */
    sendSignal: (to, dataJson) => input(() => core.sendSignal(to, dataJson)),
    /** When the core next wants the clock (its poll_timeout after the last input), or null. */
    nextTimeout: () => deadline,
    joined: () => core.joined(),
    laneOpen: (peer) => core.laneOpen(peer),
    roster: () => core.roster(),
    stats: () => core.stats(),
  };
  registry?.register(member, core);
  return member;
}
