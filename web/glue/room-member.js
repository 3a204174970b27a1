// The room member for JavaScript (src/room/member.hpp): a peer's membership in one room of the
// room relay, under a socket the caller owns. The core builds the hello, reads welcome, member,
// signal, reject and eject, keeps the roster and the lanes, and decides when to dial again; this
// file runs it through the one driver (web/glue/driver.js) and hands its actions to the caller's
// socket functions and its events to the caller (docs/design.md rule 4). Used by
// web/peer/relay-transport.js and web/peer/webrtc-transport.js.
import { createDriver } from './driver.js';
import { loadTetherModule } from './load.js';

// The peer transports run in browsers and Node, never in workerd, so the module loads here.
const mod = await loadTetherModule();

const LANE_SEND = mod.roomLaneSendNames();

/** The core's defaults and bounds (maxMessageBytes, maxFrameBytes, reconnect bounds, ...). */
export const MEMBER_DEFAULTS = Object.freeze({ ...mod.roomMemberDefaults() });
/** The op protocol version of the room relay the member speaks. */
export const MESH_PROTO_VERSION = mod.roomLimits().meshProtoVersion;
/** A hello as the room relay expects it (adapters replaying a journal use it too). */
export function helloText({ room, origin, policyVersion, schemaVersion, seq }) {
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

function randomSeed() {
  const w = new Uint32Array(2);
  globalThis.crypto.getRandomValues(w);
  return (w[0] & 0x1fffff) * 2 ** 32 + w[1]; // 53 bits: exact as a JS number
}

/**
 * @param {import('./room-member.d.ts').RoomMemberOptions} options
 * @param {import('./room-member.d.ts').RoomMemberHost} host
 * @param {import('./driver.d.ts').DriverOptions} [driverOptions]
 * @returns {import('./room-member.d.ts').RoomMember}
 */
export function createRoomMember(options, host, driverOptions = {}) {
  const json = JSON.stringify({ ...options, seed: options.seed ?? randomSeed() });
  const error = mod.roomMemberOptionsError(json);
  if (error) throw new TypeError(error);
  const core = new mod.RoomMemberCore(json);
  const driver = createDriver(
    {
      pollAction: () => core.pollAction(),
      pollEvent: () => core.pollEvent(),
      pollTimeout: () => core.pollTimeout(),
      handleTimeout: (now) => core.timeout(now),
    },
    {
      perform(a) {
        if (a.kind === 'transmit') host.transmit(a.text);
        else if (a.kind === 'dial') host.dial(a.attempt);
        else host.hangUp();
      },
      event: (e) => host.event(e),
    },
    driverOptions,
  );
  const member = {
    start: () => driver.input((now) => core.start(now)),
    linkOpen: () => driver.input((now) => core.linkOpen(now)),
    /** One frame from the relay: text, or bytes (Node's ws), which go in without a string. */
    linkMessage(data) {
      if (typeof data === 'string') return driver.input((now) => core.linkMessage(data, now));
      const bytes = ArrayBuffer.isView(data)
        ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
        : new Uint8Array(data);
      return driver.input((now) => {
        core.stage(bytes.length).set(bytes);
        core.linkMessageStaged(bytes.length, now);
      });
    },
    linkClosed: () => driver.input((now) => core.linkClosed(now)),
    close: () => {
      driver.input(() => core.close());
      driver.close();
    },
    /** Lanes: one envelope to peer; 'accepted' or why not ('not-open', 'too-big', ...). */
    sendText: (peer, text, bufferedBytes) =>
      LANE_SEND[driver.input(() => core.sendText(peer, text, bufferedBytes))],
    /** A signal to `to` with data as JSON text; false when the link is down. */
    sendSignal: (to, dataJson) => driver.input(() => core.sendSignal(to, dataJson)),
    joined: () => core.joined(),
    laneOpen: (peer) => core.laneOpen(peer),
    roster: () => core.roster(),
    stats: () => core.stats(),
  };
  registry?.register(member, core);
  return member;
}
