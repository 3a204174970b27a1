// `tether/cockpit-viewer`: a viewer's session with a cockpit relay, for browsers and Deno
// (cockpit-wire-protocol.md § Transport per leg; v7 notes § Endpoints). The viewer session core
// (src/cockpit/viewer_session.hpp) decides everything: hello, watching, which channels to
// subscribe, the teleop lease and its twist resends, publishing, pings, and when to reconnect.
// This file runs it with the one driver (web/glue/driver.js), carries its actions out over
// WebTransport when the relay offers it and the runtime has it, else over the relay's WebSocket
// twin, and hands channel frames (decoded by the wire core) to the application once the core
// says each is one it should get (a latest channel keeps the newest by seq). Bytes only.
// WebRTC video goes through `webrtc`, which holds the one recvonly peer connection (the cockpit's
// web/cockpit/src/panels/video-rtc.js): the core says when to open it and what to apply and
// answer; the host reports the connection's state and the frames it shows (rtcState, rtcMedia).
import { createViewerCore } from './cockpit-cores.js';
import { pinnedHashes, readStream, runLink } from './cockpit-transport.js';
import { createDriver } from './driver.js';

/**
 * @param {object} mod the loaded tether module
 * @param {import('./wire.d.ts').Wire} wire the wire codec on the same module
 * @param {{version: number, wtUrl?: string, certHash?: string, wsUrl: string}} info /api/info
 * @param {import('./cockpit-viewer.d.ts').ViewerOptions} [options]
 * @returns {import('./cockpit-viewer.d.ts').Viewer}
 */
export function connectViewer(mod, wire, info, options = {}) {
  const {
    token = null,
    event,
    frame,
    frameError,
    clock,
    webrtc,
    WebSocket: WebSocketImpl = globalThis.WebSocket,
  } = options;
  const core = createViewerCore(mod, { token });
  const holder = { link: null }; // the open transport, or null
  const driver = createDriver(
    core,
    {
      perform(a) {
        if (a.kind === 'connect') connect();
        else if (a.kind === 'send_control') holder.link?.control(a.bytes);
        else if (a.kind === 'send_datagram') holder.link?.datagram(a.bytes);
        else if (a.kind === 'send_stream') holder.link?.stream(a.bytes);
        else if (a.kind === 'close') holder.link?.close(a.reason);
        else if (a.kind === 'rtc_open')
          rtc(() => webrtc.open({ iceServers: a.iceServers }), 'handleRtcOffer');
        else if (a.kind === 'rtc_accept') rtc(() => webrtc.accept(a.sdp));
        // rtc_answer carries sdp, tracks, robotId and current (cockpit-cores.d.ts).
        else if (a.kind === 'rtc_answer')
          rtc(
            () => webrtc.answer(/** @type {Parameters<typeof webrtc.answer>[0]} */ (a)),
            'handleRtcAnswer',
          );
      },
      event: (e) => event?.(e),
    },
    { now: Date.now, ...clock },
  );
  // Runs one step of the peer connection; its SDP (if any) goes back to the core through `input`.
  // A step that throws counts as a failed connection: the core opens a fresh one in its slot.
  function rtc(step, input) {
    if (!webrtc) return;
    Promise.resolve()
      .then(step)
      .then(
        (sdp) => input && driver.input((t) => core[input](sdp, t)),
        (error) => {
          options.rtcError?.(error);
          driver.input((t) => core.handleRtcState('failed', t));
        },
      );
  }
  // Every frame passes the core's rule (handleFrame) before the app sees it: the payload stays
  // here, only its channel and seq cross.
  const onFrame = (f) => {
    if (driver.input((t) => core.handleFrame(f.header.ch, f.header.seq, t))) frame?.(f);
  };
  const onFrameError = (e) => frameError?.(e);

  const connect = () =>
    runLink(driver, core, holder, () =>
      info.wtUrl && typeof WebTransport !== 'undefined'
        ? webTransportLink(wire, info, driver, core, onFrame, onFrameError)
        : webSocketLink(wire, info, driver, core, onFrame, onFrameError, WebSocketImpl),
    );

  const input = (fn) => driver.input(fn);
  return {
    start: () => input((t) => core.handleStart(t)),
    get lane() {
      return holder.link?.lane ?? null;
    },
    watch: (robotId) => input((t) => core.watch(robotId, t)),
    want: (channels) => input((t) => core.want(channels, t)),
    teleopStart: () => input((t) => core.teleopStart(t)),
    teleopStop: () => input((t) => core.teleopStop(t)),
    drive: (vx, vy, wz) => input((t) => core.drive(vx, vy, wz, t)),
    estop: () => input((t) => core.estop(t)),
    publish: (ch, payload, id) => input((t) => core.publish(ch, payload, id, t)),
    /** True once the session gave up for good (a final error; the state event says why). */
    get stopped() {
      return core.stopped();
    },
    /** Frames of a track channel shown since the last report. */
    rtcMedia: (ch, frames) => input((t) => core.handleRtcMedia(ch, frames, t)),
    /** The peer connection's connectionState. */
    rtcState: (state) => input((t) => core.handleRtcState(state, t)),
    close() {
      input((t) => core.handleStop(t));
      driver.close();
    },
  };
}

// The viewer leg on WebTransport: one bidirectional control stream, frames on relay-opened
// unidirectional streams (each with its own decoder, so a corrupt or reset stream fails alone;
// workaround 12: a reset ends a latest stream), teleop as datagrams, publishes on one-shot
// bidirectional streams (workaround 1).
async function webTransportLink(wire, info, driver, core, onFrame, onFrameError) {
  const wt = new WebTransport(`${info.wtUrl}/viewer`, {
    serverCertificateHashes: info.certHash ? pinnedHashes(info.certHash) : undefined,
  });
  await wt.ready;
  const control = await wt.createBidirectionalStream();
  const writer = control.writable.getWriter();
  const datagrams = wt.datagrams.writable.getWriter();
  readStream(control.readable, (chunk) => driver.input((t) => core.handleControlData(chunk, t)));
  (async () => {
    const incoming = wt.incomingUnidirectionalStreams.getReader();
    for (;;) {
      const { value, done } = await incoming.read();
      if (done) return;
      readFrames(wire, value, onFrame, onFrameError);
    }
  })().catch(() => {});
  return {
    lane: 'webtransport',
    closed: wt.closed.then(
      (i) => i?.reason || 'closed',
      (e) => String(e?.message ?? e),
    ),
    control: (bytes) => writer.write(bytes).catch(() => {}),
    datagram: (bytes) => datagrams.write(bytes).catch(() => {}),
    stream(bytes) {
      wt.createBidirectionalStream()
        .then(async (s) => {
          s.readable.cancel().catch(() => {});
          const w = s.writable.getWriter();
          await w.write(bytes);
          await w.close();
        })
        .catch(() => {});
    },
    close(reason) {
      try {
        wt.close({ closeCode: 1, reason: reason.slice(0, 100) });
      } catch {}
    },
  };
}

async function readFrames(wire, stream, onFrame, onFrameError) {
  const decoder = new wire.DataFrameStream();
  const r = stream.getReader();
  try {
    for (;;) {
      const { value, done } = await r.read();
      if (done) break;
      const { frames, error } = decoder.push(value);
      for (const f of frames) onFrame(f);
      if (error) {
        onFrameError(error);
        r.cancel().catch(() => {});
        break;
      }
    }
  } catch {
    // A reset stream: a stale latest frame dropped by design.
  } finally {
    decoder.close();
  }
}

// The viewer leg on a WebSocket: every message is one data frame; the core takes its own (the
// @control ones) and says which are channel frames.
function webSocketLink(wire, info, driver, core, onFrame, onFrameError, WebSocketImpl) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocketImpl(`${info.wsUrl}/ws/viewer`);
    ws.binaryType = 'arraybuffer';
    let settled = false;
    const closed = new Promise((r) =>
      ws.addEventListener('close', (e) => r(e.reason || `closed (${e.code})`)),
    );
    ws.onmessage = (e) => {
      if (typeof e.data === 'string') return;
      const bytes = new Uint8Array(e.data);
      if (driver.input((t) => core.handleWsMessage(bytes, t))) return;
      const r = wire.decodeDataFrame(bytes);
      if (r.ok) onFrame(r);
      else onFrameError(r.error);
    };
    ws.onopen = () => {
      settled = true;
      const send = (bytes) => {
        if (ws.readyState === 1) ws.send(bytes);
      };
      resolve({
        lane: 'websocket',
        closed,
        control: send,
        datagram: send,
        stream: send,
        close(reason) {
          try {
            ws.close(1000, reason.slice(0, 100));
          } catch {}
        },
      });
    };
    ws.onerror = () => {
      if (!settled) reject(new Error(`WebSocket to ${info.wsUrl}/ws/viewer failed`));
    };
  });
}
