// `tether/cockpit-robot`: a robot's session with a cockpit relay, for Deno, browsers and Node
// (cockpit-wire-protocol.md § Transport per leg). The robot session core (src/cockpit/
// robot_session.hpp) decides everything: the hello and its resends, which channels are wanted, the
// teleop safety chain, pings, and when to reconnect. This file runs it with the one driver
// (web/glue/driver.js) and carries its actions out over WebTransport, or over the relay's WebSocket
// twin where no WebTransport is offered (the edge): it only moves bytes. WebRTC video (§ WebRTC
// video) goes through `webrtc`, an object that holds the peer connection and the media (the camera
// of web/sfu/camera.js is one): the core says when to open a connection and what to apply, and the
// host tells it what the media and the connection do (mediaResumed, rtcState).
import { createRobotCore, createTeleopSafety } from './cockpit-cores.js';
import {
  oneShot,
  openWebSocket,
  openWebTransport,
  readStream,
  relayInfo,
  runLink,
} from './cockpit-transport.js';
import { createDriver } from './driver.js';
import { loadTetherModule } from './load.js';

export { createRobotCore, createTeleopSafety };

// The safety chain's watchdog needs a clock that never steps back (a wall clock can).
const monotonic = () => Math.floor(performance.now());

/**
 * Connects a robot and keeps it connected.
 * @param {import('./cockpit-robot.d.ts').RobotOptions} options
 * @param {{event?: (e: import('./cockpit-robot.d.ts').RobotEvent) => void, rtcError?: (e: unknown) => void}} [handlers]
 * @returns {Promise<import('./cockpit-robot.d.ts').Robot>}
 */
export async function connectRobot(options, { event, rtcError } = {}) {
  const {
    relay,
    info: known,
    lane = 'auto',
    clock,
    WebSocket: WebSocketImpl,
    wasmModule,
    wasmBinary,
    webrtc,
    ...config
  } = options;
  const mod = await loadTetherModule({ wasmModule, wasmBinary }, 'cockpit_clients');
  const core = createRobotCore(mod, config);
  const holder = { link: null }; // the open transport, or null
  let stopped = null;
  const done = new Promise((resolve) => (stopped = resolve));

  let disposed = false;
  const driver = createDriver(
    core,
    {
      perform(a) {
        if (a.kind === 'connect') connect();
        else if (a.kind === 'send_stream') holder.link?.stream(a.bytes);
        else if (a.kind === 'send_datagram') holder.link?.datagram(a.bytes);
        else if (a.kind === 'close') holder.link?.close(a.reason);
        else if (a.kind === 'rtc_open') rtcOpen(a);
        else if (a.kind === 'rtc_accept') rtcAccept(a);
      },
      event(e) {
        if (e.kind === 'link' && e.state === 'stopped') stopped(e);
        event?.(e);
      },
    },
    { now: monotonic, ...clock },
  );
  // Transport and peer-connection callbacks may still fire after stop() freed the core: they are
  // dropped.
  const live = { input: (fn) => (disposed ? undefined : driver.input(fn)) };

  // A peer connection that cannot be made or answered counts as a failed one: the core opens a
  // fresh one when its slot comes.
  const rtcFailed = (error) => {
    rtcError?.(error);
    live.input((now) => core.handleRtcState('failed', now));
  };
  function rtcOpen(a) {
    if (!webrtc) return;
    Promise.resolve()
      .then(() => webrtc.open({ iceServers: a.iceServers, chs: a.chs }))
      .then(
        ({ sdp, tracks }) => live.input((now) => core.handleRtcOffer(sdp, tracks, now)),
        rtcFailed,
      );
  }
  function rtcAccept(a) {
    if (!webrtc) return;
    Promise.resolve()
      .then(() => webrtc.accept(a.sdp))
      .catch(rtcFailed);
  }

  const connect = () =>
    runLink(live, core, holder, async () => {
      const info = known ?? (await relayInfo(relay));
      const wt = info.wtUrl && lane !== 'websocket' && typeof WebTransport !== 'undefined';
      return wt
        ? webTransportLink(info, live, core)
        : webSocketLink(info, live, core, WebSocketImpl);
    });

  live.input((now) => core.handleStart(now));
  return {
    manifest: core.manifest,
    /**
     * One frame on an rx channel some viewer wants; `ts` is the data's time in seconds (now by
     * default). Returns why it was not sent, if it was not.
     */
    send: (ch, payload, { meta, ts = Date.now() / 1000 } = {}) =>
      live.input((now) => core.send(ch, payload, meta, ts, now)) ?? 'not_welcomed',
    ack: (ch, id) => live.input((now) => core.ack(ch, id, now)) ?? false,
    nack: (ch, id, code, message) =>
      live.input((now) => core.nack(ch, id, code, message, now)) ?? false,
    /** A track's media resumed after `gapMs` without any; true when rtc_stalled went out. */
    mediaResumed: (ch, gapMs) =>
      live.input((now) => core.handleMediaResumed(ch, gapMs, now)) ?? false,
    /** The peer connection's state; 'failed' makes the core open a fresh one. */
    rtcState: (state) => live.input((now) => core.handleRtcState(state, now)),
    wants: (ch) => !disposed && core.wants(ch),
    get welcomed() {
      return !disposed && core.welcomed();
    },
    command: () => (disposed ? { vx: 0, vy: 0, wz: 0, active: 0, floor: 0 } : core.command()),
    /** Resolves with the final link event once the robot stopped (its own stop, or a final error). */
    done,
    /** Leaves the relay for good; resolves once the transport is closed (or after `waitMs`). */
    async stop(waitMs = 1000) {
      const closing = holder.link?.closed;
      live.input((now) => core.handleStop(now));
      driver.close();
      await Promise.race([closing ?? Promise.resolve(), new Promise((r) => setTimeout(r, waitMs))]);
      if (disposed) return;
      disposed = true;
      core.dispose();
    },
  };
}

// The robot leg on WebTransport: datagrams both ways, the relay's carrier in, one-shot streams out.
async function webTransportLink(info, driver, core) {
  const wt = await openWebTransport(info, '/robot');
  const datagrams = wt.datagrams.writable.getWriter();
  readStream(wt.datagrams.readable, (bytes) =>
    driver.input((now) => core.handleDatagram(bytes, now)),
  );
  (async () => {
    // The first relay-opened stream is the carrier (workaround 3).
    const { value, done } = await wt.incomingUnidirectionalStreams
      .getReader()
      .read()
      .catch(() => ({ done: true, value: undefined }));
    if (done) return;
    await readStream(value, (chunk) => driver.input((now) => core.handleCarrierData(chunk, now)));
    // FIN or RESET: the core decides (workaround 3: the session closes and re-registers).
    driver.input((now) => core.handleCarrierEnd(now));
  })();
  return {
    lane: /** @type {const} */ ('webtransport'),
    closed: wt.closed.then(
      (i) => i?.reason || 'closed',
      (e) => String(e?.message ?? e),
    ),
    stream: (bytes) => oneShot(wt, bytes).catch(() => {}),
    datagram: (bytes) => datagrams.write(bytes).catch(() => {}),
    close(reason) {
      try {
        wt.close({ closeCode: 0, reason: reason.slice(0, 100) });
      } catch {}
    },
  };
}

// The robot leg on a WebSocket (v7 notes § Endpoints): every message is one data frame.
async function webSocketLink(info, driver, core, WebSocketImpl) {
  const ws = await openWebSocket(info, 'robot', WebSocketImpl);
  const closed = new Promise((resolve) =>
    ws.addEventListener('close', (e) => resolve(e.reason || `closed (${e.code})`)),
  );
  ws.addEventListener('message', (e) => {
    if (typeof e.data === 'string') return;
    const bytes = new Uint8Array(e.data);
    driver.input((now) => core.handleWsMessage(bytes, now));
  });
  const send = (bytes) => {
    if (ws.readyState === 1) ws.send(bytes);
  };
  return {
    lane: /** @type {const} */ ('websocket'),
    closed,
    stream: send,
    datagram: send,
    close(reason) {
      try {
        ws.close(1000, reason.slice(0, 100));
      } catch {}
    },
  };
}
