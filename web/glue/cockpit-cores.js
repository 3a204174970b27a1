// The cockpit's client cores (src/cockpit/viewer_session.hpp, robot_session.hpp,
// teleop_safety.hpp) for JavaScript: thin wrappers that move bytes into WASM memory and read the
// cores' action and event records back (bindings/cockpit_clients_bindings.cpp). They keep the one drive
// contract, so web/glue/driver.js runs them; the transports that carry their actions out are
// web/glue/cockpit-viewer.js and web/glue/cockpit-robot.js. Every protocol decision is the cores'.
import { heapViews } from './cockpit-relay.js';
import { textBytes } from './text-bytes.js';

const EMPTY = new Uint8Array(0);

// The names and numbers the client cores export (names of action, event and result kinds, the
// record layout, their time constants), read once per module.
const tablesOf = new WeakMap();
export function clientTables(mod) {
  let t = tablesOf.get(mod);
  if (!t) tablesOf.set(mod, (t = mod.cockpitClientTables()));
  return t;
}

// Staging, the record and held bytes: what every client handle shares with its wrapper.
function port(mod, core) {
  const heap = heapViews(mod);
  const record = core.record() / 8;
  const L = clientTables(mod).record;
  let stagingAt = 0;
  let stagingSize = 0;
  let serial = 0;
  let copy = null;
  return {
    stage(bytes) {
      if (bytes.length > stagingSize) {
        stagingAt = core.reserve(Math.max(bytes.length, 64));
        stagingSize = Math.max(bytes.length, 64);
      }
      mod.HEAPU8.set(bytes, stagingAt);
      return bytes.length;
    },
    // The bytes of the record just written, copied out once per distinct buffer.
    bytes() {
      const f = heap.f64();
      const s = f[record + L.bytes];
      if (s === 0) return undefined;
      if (s !== serial) {
        const at = f[record + L.bytesAt];
        copy = mod.HEAPU8.slice(at, at + f[record + L.bytesLen]);
        serial = s;
      }
      return copy;
    },
    // The next action of a client core: {kind, bytes, reason?} (a close says why), with an rtc
    // action's arguments (the core's JSON) as fields.
    action(kinds) {
      const k = core.pollAction();
      if (k < 0) return null;
      const a = { kind: kinds[k], bytes: this.bytes() ?? EMPTY };
      if (a.kind === 'close') a.reason = core.actionText();
      const args = core.actionJson();
      if (args) Object.assign(a, JSON.parse(args));
      return a;
    },
    command() {
      const f = heap.f64();
      return {
        vx: f[record + L.vx],
        vy: f[record + L.vy],
        wz: f[record + L.wz],
        active: f[record + L.active],
        floor: f[record + L.floor],
      };
    },
  };
}

const timeout = (t) => (t < 0 ? null : t);

/**
 * The viewer session core. Lanes are 'webtransport' | 'websocket'.
 * @param {object} mod the loaded tether module
 * @param {{token?: string|null}} [options]
 */
export function createViewerCore(mod, { token = null } = {}) {
  const core = new mod.CockpitViewerCore(token ?? '');
  const p = port(mod, core);
  const { viewerActions, viewerEvents } = clientTables(mod);
  return {
    handleStart: (now) => core.handleStart(now),
    handleConnected: (lane, now) => core.handleConnected(lane, now),
    handleDisconnected: (detail, now) => core.handleDisconnected(String(detail ?? ''), now),
    handleControlData: (bytes, now) => core.handleControlData(p.stage(bytes), now),
    /** True when the message was the session's; false when it is a channel frame for the app. */
    handleWsMessage: (bytes, now) => core.handleWsMessage(p.stage(bytes), now),
    /** True when the app should get this frame (the newest by seq on a latest channel). */
    handleFrame: (ch, seq, now) => core.handleFrame(textBytes(ch), seq, now),
    handleTimeout: (now) => core.handleTimeout(now),
    handleStop: (now) => core.handleStop(now),
    stopped: () => core.stopped(),
    watch: (robotId, now) => core.watch(textBytes(robotId), now),
    /** Whether the app shows the fleet: the relay then adds its link figures to `robots`. */
    fleetLink: (on, now) => core.fleetLink(Boolean(on), now),
    want: (channels, now) => core.want(JSON.stringify([...channels]), now),
    teleopStart: (now) => core.teleopStart(now),
    teleopStop: (now) => core.teleopStop(now),
    drive: (vx, vy, wz, now) => core.drive(vx, vy, wz, now),
    estop: (now) => core.estop(now),
    /** @returns {'sent'|'not_connected'|'no_watch'|'invalid'} */
    publish: (ch, payload, id, now) =>
      core.publish(textBytes(ch), p.stage(payload), textBytes(id), now),
    /** The host's offer for an rtc_open; false unless one was asked for. */
    handleRtcOffer: (sdp, now) => core.handleRtcOffer(textBytes(sdp), now),
    /** The host's answer to the relay offer of the last rtc_answer action. */
    handleRtcAnswer: (sdp, now) => core.handleRtcAnswer(textBytes(sdp), now),
    /** The peer connection's state (RTCPeerConnection.connectionState). */
    handleRtcState: (state, now) => core.handleRtcState(String(state), now),
    /** Frames of a track channel decoded since the last report. */
    handleRtcMedia: (ch, frames, now) => core.handleRtcMedia(textBytes(ch), frames, now),
    pollAction: () => p.action(viewerActions),
    pollEvent() {
      const k = core.pollEvent();
      if (k < 0) return null;
      return { kind: viewerEvents[k], ...JSON.parse(core.eventText()) };
    },
    pollTimeout: () => timeout(core.pollTimeout()),
    dispose: () => core.delete(),
  };
}

/**
 * The robot session core. Throws when the config is one the relay would refuse, naming the field.
 * @param {object} mod
 * @param {{id: string, name?: string, model?: string, manifest: object, token?: string, watchdogMs?: number}} config
 */
export function createRobotCore(mod, config) {
  const core = new mod.CockpitRobotCore(JSON.stringify(config));
  const problem = core.error();
  if (problem) {
    const code = core.errorCode();
    core.delete();
    // The kind by the core's name, so an SDK user can tell manifestUnsupported from a typo.
    throw Object.assign(new Error(`tether robot: ${problem}`), { code });
  }
  const p = port(mod, core);
  const { robotActions, robotEvents, sendResults } = clientTables(mod);
  const manifest = JSON.parse(core.manifest());
  let channel;
  return {
    /** The manifest in normal form, as the relay will hold it. */
    manifest,
    handleStart: (now) => core.handleStart(now),
    handleConnected: (lane, now) => core.handleConnected(lane, now),
    handleDisconnected: (detail, now) => core.handleDisconnected(String(detail ?? ''), now),
    handleDatagram: (bytes, now) => core.handleDatagram(p.stage(bytes), now),
    handleCarrierData: (bytes, now) => core.handleCarrierData(p.stage(bytes), now),
    handleCarrierEnd: (now) => core.handleCarrierEnd(now),
    handleWsMessage: (bytes, now) => core.handleWsMessage(p.stage(bytes), now),
    handleTimeout: (now) => core.handleTimeout(now),
    handleStop: (now) => core.handleStop(now),
    /**
     * One frame on an rx channel; ts is the data's own time in seconds.
     * @returns {'sent'|'not_welcomed'|'not_wanted'|'undeclared'|'invalid'}
     */
    send(ch, payload, meta, ts, now) {
      if (ch !== channel) {
        core.setChannel(textBytes(ch));
        channel = ch;
      }
      return sendResults[
        core.send(p.stage(payload), meta === undefined ? '' : JSON.stringify(meta), ts, now)
      ];
    },
    ack: (ch, id, now) => core.ack(textBytes(ch), textBytes(id), now),
    /** The host's offer for an rtc_open: its SDP and [{mid, ch}]. */
    handleRtcOffer: (sdp, tracks, now) =>
      core.handleRtcOffer(textBytes(sdp), JSON.stringify(tracks ?? []), now),
    /** A track's media resumed after gapMs without any; true when rtc_stalled went out. */
    handleMediaResumed: (ch, gapMs, now) => core.handleMediaResumed(textBytes(ch), gapMs, now),
    handleRtcState: (state, now) => core.handleRtcState(String(state), now),
    nack: (ch, id, code, message, now) =>
      core.nack(textBytes(ch), textBytes(id), textBytes(code ?? ''), textBytes(message ?? ''), now),
    welcomed: () => core.welcomed(),
    wants: (ch) => core.wants(textBytes(ch)),
    /** The teleop command to apply now, with the lease obeyed and the generation floor. */
    command() {
      core.command();
      return p.command();
    },
    pollAction: () => p.action(robotActions),
    pollEvent() {
      const k = core.pollEvent();
      if (k < 0) return null;
      const e = { kind: robotEvents[k], ...JSON.parse(core.eventText()) };
      if (e.kind === 'publish') e.payload = p.bytes() ?? EMPTY;
      return e;
    },
    pollTimeout: () => timeout(core.pollTimeout()),
    dispose: () => core.delete(),
  };
}

/**
 * The teleop safety chain alone, for a robot that carries relay messages itself.
 * @param {object} mod
 * @param {{watchdogMs?: number}} [options]
 */
export function createTeleopSafety(mod, { watchdogMs } = {}) {
  const { safetyCauses, limits } = clientTables(mod);
  const core = new mod.CockpitSafetyCore(watchdogMs ?? limits.defaultWatchdogMs);
  const p = port(mod, core);
  return {
    watchdogMs: core.watchdogMs(),
    /** A relay message (object, JSON text); true when it was obeyed. */
    handleMessage: (message, now) =>
      core.handleMessage(typeof message === 'string' ? message : JSON.stringify(message), now),
    handleSessionLost: (now) => core.handleSessionLost(now),
    handleTimeout: (now) => core.handleTimeout(now),
    pollTimeout: () => timeout(core.pollTimeout()),
    pollAction: () => null,
    pollEvent() {
      const k = core.pollEvent();
      if (k < 0) return null;
      return { kind: 'command', cause: safetyCauses[k], ...p.command() };
    },
    command() {
      core.command();
      return p.command();
    },
    dispose: () => core.delete(),
  };
}
