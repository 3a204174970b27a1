// `tether/relay-cockpit`: the cockpit relay core (src/cockpit/relay.hpp) for JavaScript hosts. A
// thin wrapper: it moves bytes into WASM memory and turns the core's action records into plain
// objects, copying the bytes of one buffer once however many viewers it goes to. The core keeps
// the one drive contract (web/glue/driver.js runs it): handle*(…, now), pollAction(),
// pollTimeout() and handleTimeout(now). Every protocol decision is the core's (DESIGN.md rule 4).
import { loadTetherModule } from './load.js';

/**
 * Loads the module and makes a relay core.
 * @param {import('./cockpit-relay.d.ts').RelayOptions & {wasmModule?: WebAssembly.Module, wasmBinary?: Uint8Array}} [options]
 */
export async function loadCockpitRelay(options = {}) {
  return createCockpitRelay(await loadTetherModule(options, 'cockpit_relay'), options);
}

/**
 * Wraps a loaded module. Throws when the auth file is invalid, with the entry at fault. `sfu`: an
 * SFU is configured (the relay brokers WebRTC video); `turn`: it has a TURN key.
 * `wallClockMs` is the host's wall clock (ms since the epoch) at the `now` it calls 0, and
 * `leaseGenFloor` the newest lease generation a persist_lease_gen action stored: together they
 * keep teleop generations growing across restarts. `webSocketBufferedAmount` false tells the core
 * the host cannot see what its WebSockets buffer (workerd), so the core paces them itself.
 * @param {object} mod
 * @param {import('./cockpit-relay.d.ts').RelayOptions} [options]
 */
export function createCockpitRelay(
  mod,
  {
    authText = '',
    sfu = false,
    turn = false,
    wallClockMs = 0,
    leaseGenFloor = 0,
    webSocketBufferedAmount = true,
  } = {},
) {
  const core = new mod.CockpitRelayCore(
    authText,
    sfu,
    sfu && turn,
    wallClockMs,
    leaseGenFloor,
    webSocketBufferedAmount,
  );
  const problem = core.error();
  if (problem) {
    core.delete();
    throw new Error(`tether relay: the auth file is invalid: ${problem}`);
  }
  const limits = mod.cockpitRelayLimits();
  const kinds = mod.cockpitRelayActionKinds();
  const ends = mod.cockpitStreamEnds();
  const deliveries = mod.wireDeliveryNames();
  const codes = mod.wireErrorCodes().map((e) => e.code);
  const ops = mod.cockpitSfuOps();
  const encoder = new TextEncoder();
  const L = mod.cockpitRelayRecordLayout();
  const heap = heapViews(mod);
  const record = core.record() / 8;

  let stagingAt = 0;
  let stagingSize = 0;
  const stage = (bytes) => {
    if (bytes.length > stagingSize) {
      stagingAt = core.reserve(bytes.length);
      stagingSize = bytes.length;
    }
    mod.HEAPU8.set(bytes, stagingAt);
    return bytes.length;
  };

  let serial = 0;
  let copy = null;
  function pollAction() {
    const k = core.pollAction();
    if (k < 0) return null;
    const f = heap.f64();
    const r = record;
    const kind = kinds[k];
    /** @type {import('./cockpit-relay.d.ts').Action} */
    const a = { kind, session: f[r + L.session], stream: f[r + L.stream] };
    const s = f[r + L.bytes];
    if (s !== 0) {
      if (s !== serial) {
        const at = f[r + L.bytesAt];
        copy = mod.HEAPU8.slice(at, at + f[r + L.bytesLen]);
        serial = s;
      }
      a.bytes = copy;
    }
    if (kind === 'open_stream') {
      a.ch = core.actionText();
      a.delivery = deliveries[f[r + L.delivery]];
      a.sendOrder = f[r + L.sendOrder];
    } else if (kind === 'reset_stream') {
      a.end = ends[f[r + L.end]];
    } else if (kind === 'close_session') {
      const c = f[r + L.code];
      a.code = c < 0 ? null : codes[c];
      a.reason = core.actionText();
    } else if (kind === 'persist_lease_gen') {
      a.gen = f[r + L.gen];
    } else if (kind === 'sfu_call') {
      a.call = f[r + L.call];
      a.op = ops[f[r + L.op]];
      a.sfuSession = core.actionText();
    } else if (kind === 'sfu_cancel') {
      a.call = f[r + L.call];
    } else if (kind === 'handoff') {
      a.robot = core.actionText();
    }
    return a;
  }

  return {
    limits,
    /** @param {'robot'|'viewer'} role @param {'webtransport'|'websocket'} lane @returns {number} 0 when full */
    handleSessionOpen: (role, lane, now) => core.handleSessionOpen(role, lane, now),
    handleSessionClosed: (session, now) => core.handleSessionClosed(session, now),
    handleControlData: (session, bytes, now) => core.handleControlData(session, stage(bytes), now),
    handleDatagram: (session, bytes, now) => core.handleDatagram(session, stage(bytes), now),
    /** @returns {number} a stream id, or 0 when the session may open no more */
    handleIncomingOpen: (session, now) => core.handleIncomingOpen(session, now),
    handleIncomingData: (stream, bytes, now) => core.handleIncomingData(stream, stage(bytes), now),
    handleIncomingEnd: (stream, now) => core.handleIncomingEnd(stream, now),
    handleWsMessage: (session, bytes, now) => core.handleWsMessage(session, stage(bytes), now),
    handleStreamOpened: (stream, now) => core.handleStreamOpened(stream, now),
    handleWriteDone: (stream, now) => core.handleWriteDone(stream, now),
    /** `count` writes of `stream` completed, in one crossing (the same as `count` handleWriteDone). */
    handleWritesDone: (stream, count, now) => core.handleWritesDone(stream, count, now),
    handleStreamFailed: (stream, now) => core.handleStreamFailed(stream, now),
    /** The Realtime client's result of an sfu_call (an object, or its JSON text). */
    handleSfuResult: (call, result, now) =>
      core.handleSfuResult(
        call,
        stage(encoder.encode(typeof result === 'string' ? result : JSON.stringify(result))),
        now,
      ),
    handleTimeout: (now) => core.handleTimeout(now),
    /** A fleet split over objects (src/cockpit/fleet.hpp): 'whole', 'directory' or 'robot'. */
    setFleetPart: (part, homeRobot = '') => core.setFleetPart(part, homeRobot),
    /** The ticket of a handoff action (its bytes, or their text), on the session that moved here. */
    handleHandoff: (session, ticket, now) =>
      core.handleHandoff(
        session,
        stage(typeof ticket === 'string' ? encoder.encode(ticket) : ticket),
        now,
      ),
    /** Directory: a robot object's presence report on link `link` ('null' when it closed). */
    handlePresence: (link, report, now) =>
      core.handlePresence(
        link,
        stage(typeof report === 'string' ? encoder.encode(report) : report),
        now,
      ),
    /** Robot part: the bytes of the directory's fleet_robots action. */
    handleFleetRobots: (bytes, now) =>
      core.handleFleetRobots(stage(typeof bytes === 'string' ? encoder.encode(bytes) : bytes), now),
    handleDirectoryLost: (now) => core.handleDirectoryLost(now),
    /** The absolute time (ms, the host's clock) of the next reap or publish deadline, or null. */
    pollTimeout() {
      const t = core.pollTimeout();
      return t < 0 ? null : t;
    },
    pollAction,
    /** GET /api/stats */
    stats: () => JSON.parse(core.stats()),
    sessionCount: () => core.sessionCount(),
    dispose: () => core.delete(),
  };
}

// A Float64Array over WASM memory, rebuilt when the memory grew (that replaces its buffer).
export function heapViews(mod) {
  let buffer = null;
  let view = null;
  return {
    f64() {
      if (mod.HEAPU8.buffer !== buffer) {
        buffer = mod.HEAPU8.buffer;
        view = new Float64Array(buffer);
      }
      return view;
    },
  };
}
